package quota

// tags picks the entity a client's usage is measured against, as Kafka's
// DefaultQuotaCallback.quotaMetricTags, most specific first:
//
//  1. /config/users/<user>/clients/<client-id>
//  2. /config/users/<user>/clients/<default>
//  3. /config/users/<user>
//  4. /config/users/<default>/clients/<client-id>
//  5. /config/users/<default>/clients/<default>
//  6. /config/users/<default>
//  7. /config/clients/<client-id>
//  8. /config/clients/<default>
//
// Usage under a user-only entity is shared by all the user's clients
// (client tag ""), under a client-only entity by the client id's users.
// user and client are sanitized.
func (m *Manager) tags(t Type, user, client string) tags {
	o := m.overrides[t]
	has := func(u, c string) bool { _, ok := o[Entity{u, c}]; return ok }
	switch {
	case has(user, client), has(user, Default):
		return tags{user, client}
	case has(user, ""):
		return tags{user, ""}
	case has(Default, client), has(Default, Default):
		return tags{user, client}
	case has(Default, ""):
		return tags{user, ""}
	}
	return tags{"", client}
}

// limit is DefaultQuotaCallback.quotaLimit: the bound for a sensor's tags.
func (m *Manager) limit(t Type, tg tags) (float64, bool) {
	o := m.overrides[t]
	var order []Entity
	switch {
	case tg.user != "" && tg.client != "":
		order = []Entity{{tg.user, tg.client}, {tg.user, Default}, {Default, tg.client}, {Default, Default}}
	case tg.user != "":
		order = []Entity{{tg.user, ""}, {Default, ""}}
	case tg.client != "":
		order = []Entity{{"", tg.client}, {"", Default}}
	}
	for _, e := range order {
		if v, ok := o[e]; ok {
			return v, true
		}
	}
	return 0, false
}

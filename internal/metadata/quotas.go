package metadata

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Client quota entities, Kafka's ZooKeeper layout (ZkAdminManager,
// ConfigType.User/Client): names sanitized (quota.Sanitize), "<default>"
// for the default entity, each a {"version":1,"config":{...}} document
// whose values are decimal strings.
//
//	/config/users/<user>
//	/config/users/<user>/clients/<client-id>
//	/config/clients/<client-id>
const (
	UserConfigsPrefix   = "/config/users/"
	ClientConfigsPrefix = "/config/clients/"
)

// QuotaEntityKey is the key of an entity; user and clientID are sanitized
// names, "" for a missing component (not both).
func QuotaEntityKey(user, clientID string) string {
	switch {
	case user != "" && clientID != "":
		return UserConfigsPrefix + user + "/clients/" + clientID
	case user != "":
		return UserConfigsPrefix + user
	}
	return ClientConfigsPrefix + clientID
}

// ParseQuotaEntityKey splits a key under UserConfigsPrefix or
// ClientConfigsPrefix into its sanitized names.
func ParseQuotaEntityKey(key string) (user, clientID string, ok bool) {
	if rest, found := strings.CutPrefix(key, ClientConfigsPrefix); found {
		return "", rest, rest != "" && !strings.Contains(rest, "/")
	}
	rest, found := strings.CutPrefix(key, UserConfigsPrefix)
	if !found || rest == "" {
		return "", "", false
	}
	user, tail, hasTail := strings.Cut(rest, "/")
	if !hasTail {
		return user, "", true
	}
	clientID, found = strings.CutPrefix(tail, "clients/")
	return user, clientID, found && clientID != "" && !strings.Contains(clientID, "/")
}

// EncodeEntityConfig writes an entity config document (the topic config
// document's format).
func EncodeEntityConfig(cfg map[string]string) []byte { return EncodeTopicConfig(cfg) }

// DecodeEntityConfig reads an entity config document.
func DecodeEntityConfig(b []byte) (map[string]string, error) {
	var c TopicConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("metadata: entity config: %w", err)
	}
	return c.Config, nil
}

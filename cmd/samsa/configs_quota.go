package main

// samsa configs for users and clients: client quotas (KIP-546), as
// ConfigCommand's describeQuotaConfigs and alterQuotaConfigs. SCRAM
// credentials are not supported (Samsa has no SASL yet).

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// quotaKeys are Kafka's QuotaConfigs.isClientOrUserQuotaConfig names.
var quotaKeys = []string{"producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate"}

// quotaEntityType is the ClientQuotaEntity type of an --entity-type.
func quotaEntityType(typ string) string {
	if typ == "users" {
		return "user"
	}
	return "client-id"
}

// quotaComponents is the strict filter of a describe: a name matches
// exactly, "" the default entity, no name any entity of the type.
func quotaComponents(o *configsOpts) []kadm.DescribeClientQuotaComponent {
	var out []kadm.DescribeClientQuotaComponent
	for i, typ := range o.types {
		c := kadm.DescribeClientQuotaComponent{Type: quotaEntityType(typ), MatchType: kmsg.QuotasMatchTypeAny}
		if i < len(o.names) {
			if o.names[i] == "" {
				c.MatchType = kmsg.QuotasMatchTypeDefault
			} else {
				name := o.names[i]
				c.MatchType, c.MatchName = kmsg.QuotasMatchTypeExact, &name
			}
		}
		out = append(out, c)
	}
	return out
}

func describeQuotas(ctx context.Context, adm *kadm.Client, o *configsOpts, stdout io.Writer) error {
	qs, err := adm.DescribeClientQuotas(ctx, true, quotaComponents(o))
	if err != nil {
		return err
	}
	for _, q := range qs {
		fmt.Fprintln(stdout, formatQuota(q))
	}
	return nil
}

// formatQuota is ConfigCommand's "Quota configs for <entity> are <k=v, …>".
func formatQuota(q kadm.DescribedClientQuota) string {
	var parts []string
	for _, typ := range []string{"user", "client-id", "ip"} {
		for _, c := range q.Entity {
			if c.Type != typ {
				continue
			}
			name := map[string]string{"user": "user-principal", "client-id": "client-id", "ip": "ip"}[typ]
			if c.Name == nil {
				parts = append(parts, "the default "+name)
			} else {
				parts = append(parts, fmt.Sprintf("%s '%s'", name, *c.Name))
			}
		}
	}
	vals := slices.Clone(q.Values)
	slices.SortFunc(vals, func(a, b kadm.ClientQuotaValue) int { return strings.Compare(a.Key, b.Key) })
	var kvs []string
	for _, v := range vals {
		kvs = append(kvs, v.Key+"="+javaDouble(v.Value))
	}
	return fmt.Sprintf("Quota configs for %s are %s", strings.Join(parts, ", "), strings.Join(kvs, ", "))
}

// javaDouble prints f as Java's Double.toString does.
func javaDouble(f float64) string {
	if a := max(f, -f); a != 0 && (a < 1e-3 || a >= 1e7) {
		mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'E', -1, 64), "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		n, _ := strconv.Atoi(exp)
		return mant + "E" + strconv.Itoa(n)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// alterQuotas sets and removes quota configs of one entity (a user, a
// client, or a user and client), each name "" for the default entity.
func alterQuotas(ctx context.Context, adm *kadm.Client, o *configsOpts) error {
	if err := checkQuotaKeys(o); err != nil {
		return err
	}
	var entity kadm.ClientQuotaEntity
	for i, typ := range o.types {
		c := kadm.ClientQuotaEntityComponent{Type: quotaEntityType(typ)}
		if o.names[i] != "" {
			name := o.names[i]
			c.Name = &name
		}
		entity = append(entity, c)
	}
	old, err := adm.DescribeClientQuotas(ctx, true, quotaComponents(o))
	if err != nil {
		return err
	}
	var missing []string
	for _, k := range o.deletes {
		if len(old) == 0 || !slices.ContainsFunc(old[0].Values, func(v kadm.ClientQuotaValue) bool { return v.Key == k }) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return &argError{"Invalid config(s): " + strings.Join(missing, ",")}
	}
	ops, err := quotaOps(o)
	if err != nil {
		return err
	}
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: entity, Ops: ops}})
	if err != nil {
		return err
	}
	for _, r := range res {
		if r.Err != nil {
			return &kafkaError{err: r.Err, msg: &r.ErrMessage}
		}
	}
	return nil
}

func checkQuotaKeys(o *configsOpts) error {
	var bad []string
	for _, kv := range o.adds {
		if !slices.Contains(quotaKeys, kv[0]) {
			bad = append(bad, kv[0])
		}
	}
	for _, k := range o.deletes {
		if !slices.Contains(quotaKeys, k) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &argError{fmt.Sprintf("Only quota configs can be added for '%s' using --bootstrap-server. Unexpected config names: Set(%s)",
		o.types[0], strings.Join(bad, ", "))}
}

func quotaOps(o *configsOpts) ([]kadm.AlterClientQuotaOp, error) {
	var ops []kadm.AlterClientQuotaOp
	for _, kv := range o.adds {
		f, err := strconv.ParseFloat(kv[1], 64)
		if err != nil {
			return nil, &argError{fmt.Sprintf("Cannot parse quota configuration value for %s: %s", kv[0], kv[1])}
		}
		ops = append(ops, kadm.AlterClientQuotaOp{Key: kv[0], Value: f})
	}
	for _, k := range o.deletes {
		ops = append(ops, kadm.AlterClientQuotaOp{Key: k, Remove: true})
	}
	return ops, nil
}

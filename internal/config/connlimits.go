package config

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// ConnectionsPerIPOverrides parses max.connections.per.ip.overrides,
// "host:count,host:count" (Kafka's parseCsvMap, the count after the last
// colon so that an IPv6 address may be a host): an IP address stands for
// itself, a host name for the addresses it resolves to.
func ConnectionsPerIPOverrides(v string) (map[netip.Addr]int, error) {
	out := map[netip.Addr]int{}
	for _, entry := range strings.Split(v, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		i := strings.LastIndex(entry, ":")
		if i <= 0 {
			return nil, fmt.Errorf("%q is not host:count", entry)
		}
		host, count := strings.TrimSpace(entry[:i]), strings.TrimSpace(entry[i+1:])
		n, err := strconv.Atoi(count)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q: the count must be a whole number of 0 or more", entry)
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if a, err := netip.ParseAddr(host); err == nil {
			out[a.Unmap()] = n
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		cancel()
		if err != nil || len(addrs) == 0 {
			return nil, fmt.Errorf("%q: unknown host %s", entry, host)
		}
		for _, a := range addrs {
			out[a.Unmap()] = n
		}
	}
	return out, nil
}

func perIPOverrides(v string) error {
	_, err := ConnectionsPerIPOverrides(v)
	return err
}

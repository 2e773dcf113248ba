package metadata

import "testing"

func TestQuotaEntityKeys(t *testing.T) {
	for _, e := range [][2]string{{"u", ""}, {"u", "c"}, {"", "c"}, {"<default>", "<default>"}, {"", "<default>"}} {
		key := QuotaEntityKey(e[0], e[1])
		u, c, ok := ParseQuotaEntityKey(key)
		if !ok || u != e[0] || c != e[1] {
			t.Errorf("%s parsed as %q %q %v", key, u, c, ok)
		}
	}
	for _, bad := range []string{"/config/users/", "/config/users/u/x/c", "/config/clients/a/b", "/config/topics/t"} {
		if _, _, ok := ParseQuotaEntityKey(bad); ok {
			t.Errorf("%s parsed", bad)
		}
	}
}

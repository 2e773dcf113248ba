package broker

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
)

// ensureMetaProperties reads or writes Kafka's meta.properties in every log
// dir (version, broker.id, cluster.id) and returns the cluster id. Dirs that
// disagree on the cluster or broker id refuse to start, as Kafka does.
func ensureMetaProperties(dirs []string, nodeID int32) (string, error) {
	clusterID := ""
	var missing []string
	for _, d := range dirs {
		props, err := readMetaProperties(filepath.Join(d, "meta.properties"))
		if os.IsNotExist(err) {
			missing = append(missing, d)
			continue
		}
		if err != nil {
			return "", err
		}
		if props["broker.id"] != fmt.Sprint(nodeID) {
			return "", fmt.Errorf("broker: %s/meta.properties has broker.id=%s but this broker is %d", d, props["broker.id"], nodeID)
		}
		if clusterID != "" && props["cluster.id"] != clusterID {
			return "", fmt.Errorf("broker: log dirs belong to different clusters (%s and %s)", clusterID, props["cluster.id"])
		}
		clusterID = props["cluster.id"]
	}
	if clusterID == "" {
		id := uuid.New()
		clusterID = base64.RawURLEncoding.EncodeToString(id[:])
	}
	for _, d := range missing {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", fmt.Errorf("broker: %w", err)
		}
		body := fmt.Sprintf("#\n#%s\nversion=0\nbroker.id=%d\ncluster.id=%s\n", "written by samsa", nodeID, clusterID)
		if err := writeFileSync(filepath.Join(d, "meta.properties"), []byte(body)); err != nil {
			return "", fmt.Errorf("broker: writing meta.properties: %w", err)
		}
	}
	return clusterID, nil
}

func readMetaProperties(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	props := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			props[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return props, nil
}

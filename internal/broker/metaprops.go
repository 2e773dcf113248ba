package broker

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/samsa-kafka/samsa/internal/config"
)

// localClusterID is the cluster id recorded in the log dirs'
// meta.properties, "" when none has one.
func localClusterID(dirs []string) (string, error) {
	for _, d := range dirs {
		props, err := readMetaProperties(filepath.Join(d, "meta.properties"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return "", err
		}
		if id := props["cluster.id"]; id != "" {
			return id, nil
		}
	}
	return "", nil
}

// ensureMetaProperties checks or writes Kafka's meta.properties (version,
// broker.id, cluster.id) in every log dir. A dir of another broker or
// another cluster refuses to start, as Kafka does.
func ensureMetaProperties(dirs []string, nodeID int32, clusterID string) error {
	for _, d := range dirs {
		path := filepath.Join(d, "meta.properties")
		props, err := readMetaProperties(path)
		if err == nil {
			if props["broker.id"] != fmt.Sprint(nodeID) {
				return fmt.Errorf("broker: %s has broker.id=%s but this broker is %d", path, props["broker.id"], nodeID)
			}
			if props["cluster.id"] != clusterID {
				return fmt.Errorf("broker: %s has cluster.id=%s but the store's cluster is %s", path, props["cluster.id"], clusterID)
			}
			continue
		}
		if !os.IsNotExist(err) {
			return err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("broker: %w", err)
		}
		body := fmt.Sprintf("#\n#written by samsa\nversion=0\nbroker.id=%d\ncluster.id=%s\n", nodeID, clusterID)
		if err := writeFileSync(path, []byte(body)); err != nil {
			return fmt.Errorf("broker: writing meta.properties: %w", err)
		}
	}
	return nil
}

func readMetaProperties(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return config.ParseProperties(f)
}

// writeFileSync replaces path with data durably (temp file, fsync, rename,
// fsync of the directory).
func writeFileSync(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

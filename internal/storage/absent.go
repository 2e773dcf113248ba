package storage

// Before CreateTopics registers new logs, it checks that their directories
// do not exist: one there would be a directory the manager did not find at
// startup, which the log's first append could not create. Nothing is
// written; per log dir, one listing when the batch is large for the
// directory (see listPays), else an lstat each.

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// checkAbsent fails if the directory of a fresh log (slabs of reserve)
// exists.
func checkAbsent(dirs []*logDir, fresh [][]Log) error {
	for _, d := range dirs {
		n := 0
		eachIn(d, fresh, func(*Log) error { n++; return nil })
		if n == 0 {
			continue
		}
		check := lstatAbsent
		if listPays(d.path, n) {
			check = listAbsent
		}
		if err := check(d, fresh); err != nil {
			return err
		}
	}
	return nil
}

// listPays says whether listing dir once is cheaper than n lstats: a
// listing costs about a tenth of an lstat per entry, and a directory's size
// bounds its entries (16 bytes or more each on common file systems).
func listPays(dir string, n int) bool {
	st, err := os.Stat(dir)
	return err == nil && int64(n)*512 >= st.Size()
}

// lstatAbsent checks the directory of each fresh log in d with an lstat.
func lstatAbsent(d *logDir, fresh [][]Log) error {
	return eachIn(d, fresh, func(l *Log) error {
		_, err := os.Lstat(l.dir())
		if err == nil {
			return fmt.Errorf("storage: create partition dir: %w: %s", os.ErrExist, l.tp)
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("storage: create partition dir: %w", err)
		}
		return nil
	})
}

// listAbsent checks the fresh logs in d against one listing of d.
func listAbsent(d *logDir, fresh [][]Log) error {
	f, err := os.Open(d.path)
	if err != nil {
		return fmt.Errorf("storage: create partition dir: %w", err)
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return fmt.Errorf("storage: create partition dir: %w", err)
	}
	present := map[string]bool{}
	for _, n := range names { // only "<topic>-<digits>" can be a partition's
		if i := strings.LastIndexByte(n, '-'); i > 0 && i < len(n)-1 && strings.Trim(n[i+1:], "0123456789") == "" {
			present[n] = true
		}
	}
	if len(present) == 0 {
		return nil
	}
	var name []byte // each log's directory name, built without allocating
	return eachIn(d, fresh, func(l *Log) error {
		name = strconv.AppendInt(append(append(name[:0], l.tp.Topic...), '-'), int64(l.tp.Partition), 10)
		if present[string(name)] {
			return fmt.Errorf("storage: create partition dir: %w: %s", os.ErrExist, l.tp)
		}
		return nil
	})
}

// eachIn calls fn with each fresh log in d, until an error.
func eachIn(d *logDir, fresh [][]Log, fn func(*Log) error) error {
	for _, slab := range fresh {
		for i := range slab {
			if l := &slab[i]; l.dirs == d {
				if err := fn(l); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

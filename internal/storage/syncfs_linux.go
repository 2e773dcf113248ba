package storage

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// errNoSyncfs: the platform has no syncfs(2); callers fsync file by file.
var errNoSyncfs = errors.New("storage: syncfs not available")

// syncfs commits every dirty inode of the file system holding f, data and
// metadata (syncfs(2)). Since Linux 5.8 it reports write-back errors seen on
// that file system since f was opened.
func syncfs(f *os.File) error {
	if fsyncDisabled.Load() {
		return nil
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("storage: syncfs: %w", err)
	}
	var serr error
	if err := sc.Control(func(fd uintptr) { serr = unix.Syncfs(int(fd)) }); err != nil {
		return fmt.Errorf("storage: syncfs: %w", err)
	}
	switch {
	case serr == nil:
		return nil
	case errors.Is(serr, syscall.ENOSYS):
		return errNoSyncfs
	default:
		return fmt.Errorf("storage: syncfs: %w", serr)
	}
}

//go:build !linux

package storage

import (
	"errors"
	"os"
)

var errNoSyncfs = errors.New("storage: syncfs not available")

func syncfs(*os.File) error { return errNoSyncfs }

//go:build !linux

package nodeagent

import (
	"errors"
	"os"
)

// statfs is not implemented beyond Linux, where node agents run.
func statfs(*os.File) (total, avail int64, err error) {
	return 0, 0, errors.New("statfs of the cache root: only implemented on Linux")
}

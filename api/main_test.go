package api_test

import (
	"strconv"
	"testing"

	"platformapi/api/apitest"
)

func TestMain(m *testing.M) { apitest.Main(m) }

func parseInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }

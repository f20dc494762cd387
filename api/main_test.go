package api_test

import (
	"testing"

	"platformapi/bunstore/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

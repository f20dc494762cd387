package bunstore

import (
	"log/slog"
	"testing"
)

func TestEmbedded_AttachToRunningClusterLeavesItRunning(t *testing.T) {
	dir := t.TempDir()
	logger := slog.New(slog.NewTextHandler(t.Output(), nil))
	if _, running, err := AttachEmbedded(dir, logger); err != nil || running {
		t.Fatalf("nothing runs yet: running=%v err=%v", running, err)
	}
	owner := startTestCluster(t, dir, WithNoSync())
	mustExec(t, owner.DSN("postgres"), "CREATE TABLE marker (n int)")
	guest, running, err := AttachEmbedded(dir, logger)
	if err != nil || !running {
		t.Fatalf("attach: running=%v err=%v", running, err)
	}
	if guest.DSN("postgres") != owner.DSN("postgres") {
		t.Fatalf("DSN %q, want %q", guest.DSN("postgres"), owner.DSN("postgres"))
	}
	if err := guest.Stop(); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, owner.DSN("postgres"), "SELECT count(*) FROM marker"); n != 0 {
		t.Fatalf("marker rows %d", n)
	}
	if err := owner.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, running, _ := AttachEmbedded(dir, logger); running {
		t.Fatal("a stopped cluster must not be attached")
	}
}

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"strconv"
)

// maxLoggedRefusals bounds the server's lines a report quotes for one load.
const maxLoggedRefusals = 5

// logSize is how long the server's log is now (where a load's lines start).
func logSize(path string) int64 {
	if fi, err := os.Stat(path); err == nil {
		return fi.Size()
	}
	return 0
}

// refusedLines returns up to maxLoggedRefusals lines the server logged from
// offset on that explain answers other than 2xx: access lines with another
// status (499, a client hanging up at the end of a load, left out) and
// lines at level ERROR. They go into the report, since the log is removed
// with the run's work directory.
func refusedLines(path string, offset int64) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() && len(out) < maxLoggedRefusals {
		if explainsRefusal(sc.Bytes()) {
			out = append(out, sc.Text())
		}
	}
	return out
}

// explainsRefusal reports whether a log line is an access line with a
// status other than 2xx and 499, or an ERROR line.
func explainsRefusal(line []byte) bool {
	var l struct {
		Level  string `json:"level"`
		Msg    string `json:"msg"`
		Status int    `json:"status"`
	}
	if json.Unmarshal(line, &l) != nil {
		return false
	}
	if l.Level == "ERROR" {
		return true
	}
	st := strconv.Itoa(l.Status)
	return l.Msg == "request" && st[0] != '2' && st != "499"
}

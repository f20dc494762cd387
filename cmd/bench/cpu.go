package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cpuTimes is CPU time spent by each side of a load: "server" (the process
// loaded), "postgres" (backends connected to the bench database), "redis"
// (redis-server processes) and "wrk" (the client: wrk from its rusage, or
// this process for a paced load).
type cpuTimes map[string]time.Duration

// cpuSample is the CPU time of each process of a side, by pid.
type cpuSample map[string]map[int]time.Duration

// clockTick is the unit of utime and stime in /proc/PID/stat (USER_HZ,
// 100 on Linux).
const clockTick = 10 * time.Millisecond

// cpuSnapshot reads the CPU time used so far by the server process pid, the
// PostgreSQL backends of the bench database and Redis. Backends that end
// meanwhile are missed; the pools keep theirs open during a load.
func cpuSnapshot(pid int) cpuSample {
	out := cpuSample{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		p, _ := strconv.Atoi(filepath.Base(d))
		side := ""
		switch cmdline := readCmdline(d); {
		case p == pid:
			side = "server"
		case strings.HasPrefix(cmdline, "postgres: ") && strings.Contains(cmdline, " "+benchDB+" "):
			side = "postgres"
		case strings.Contains(cmdline, "redis-server"):
			side = "redis"
		default:
			continue
		}
		if out[side] == nil {
			out[side] = map[int]time.Duration{}
		}
		out[side][p] = procCPU(d)
	}
	return out
}

func readCmdline(dir string) string {
	b, _ := os.ReadFile(dir + "/cmdline")
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// procCPU is utime + stime of /proc/PID (0 when it is gone).
func procCPU(dir string) time.Duration {
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // comm may hold spaces
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * clockTick
}

// since is the CPU spent by each side between before and c: by the
// processes alive at c (a process started meanwhile counts from zero; one
// that ended meanwhile is missed).
func (c cpuSample) since(before cpuSample) cpuTimes {
	out := cpuTimes{}
	for side, procs := range c {
		for pid, t := range procs {
			out[side] += t - before[side][pid]
		}
	}
	return out
}

package leaktest

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that keeps Errorf's message instead of failing.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) { r.msg = fmt.Sprintf(format, args...) }

//go:noinline
func parkedForLeakTest(stop chan struct{}) { <-stop }

func TestWaitBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		// hold takes what the case leaves behind and returns its release.
		hold func(t *testing.T) (release func())
		// release runs before WaitBack (given back) or after it (kept).
		givenBack bool
		want      string // in the failure message; "" when it must pass
		pooled    map[string]int
	}{
		{name: "nothing held", hold: func(*testing.T) func() { return func() {} }, givenBack: true},
		{name: "goroutines given back", hold: parkGoroutines, givenBack: true},
		{name: "goroutines kept", hold: parkGoroutines, want: "parkedForLeakTest"},
		{name: "files given back", hold: openFiles, givenBack: true},
		{name: "files kept", hold: openFiles, want: os.DevNull},
		{name: "files kept by a pool within its bound", hold: openFiles, pooled: map[string]int{os.DevNull: 10}},
		{name: "files kept by a pool beyond its bound", hold: openFiles, pooled: map[string]int{os.DevNull: 5}, want: os.DevNull},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.HasPrefix(tc.name, "files") && runtime.GOOS != "linux" {
				t.Skip("open descriptors are counted from /proc/self/fd")
			}
			base := Take()
			release := tc.hold(t)
			if tc.givenBack {
				release()
			} else {
				defer release()
			}
			r := &recorder{TB: t}
			WaitBack(r, base, Slack{Goroutines: 2, FDs: 2, Pooled: tc.pooled}, 300*time.Millisecond)
			switch {
			case tc.want == "" && r.msg != "":
				t.Fatalf("failed though everything was given back: %s", r.msg)
			case tc.want != "" && !strings.Contains(r.msg, tc.want):
				t.Fatalf("failure message does not name %q:\n%s", tc.want, r.msg)
			}
		})
	}
}

// parkGoroutines starts ten goroutines that wait until released.
func parkGoroutines(*testing.T) func() {
	stop := make(chan struct{})
	for range 10 {
		go parkedForLeakTest(stop)
	}
	return func() { close(stop) }
}

// openFiles opens ten descriptors that stay open until released.
func openFiles(t *testing.T) func() {
	var fs []*os.File
	for range 10 {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	return func() {
		for _, f := range fs {
			_ = f.Close()
		}
	}
}

//go:build unix

package billjournal

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// killDirEnv names the journal directory of the process that
// TestJournalSurvivesKill9 starts and kills.
const killDirEnv = "BILLJOURNAL_TEST_KILL_DIR"

// A process killed with SIGKILL leaves its journal as its last write did:
// while it lives no other process takes the journal over, and once it is
// dead the next one gets its live bills.
func TestJournalSurvivesKill9(t *testing.T) {
	if dir := os.Getenv(killDirEnv); dir != "" {
		j, err := Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 3; n++ {
			if err := j.Keep(testBill(n)); err != nil {
				t.Fatal(err)
			}
		}
		if err := j.Charged(testBill(2).ID); err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("kept\n")
		time.Sleep(time.Minute) // killed before it ends
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestJournalSurvivesKill9$")
	cmd.Env = append(os.Environ(), killDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		s.Scan()
		line <- s.Text()
	}()
	select {
	case l := <-line:
		if l != "kept" {
			t.Fatalf("the process said %q", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the process kept no bills in 30 s")
	}
	beside := openJournal(t, dir, nil)
	if len(beside.Bills()) != 0 {
		t.Fatalf("a live process's journal was taken over: %v", ids(beside.Bills()))
	}
	beside.Close()
	if err := cmd.Process.Signal(os.Kill); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	after := openJournal(t, dir, nil)
	if got := ids(after.Bills()); !slices.Equal(got, want(1, 3)) {
		t.Fatalf("after kill -9: %v, want %v", got, want(1, 3))
	}
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// loadResult is what one closed-loop load run measured.
type loadResult struct {
	ok, errs  int
	latencies []time.Duration // successful calls, sorted
	elapsed   time.Duration
	firstErr  error
	cpu       machineCPU // the whole machine's, while the load ran
}

// mergeCPU sums the machine CPU of runs merged into one result: a result
// that has run for no time yet takes the run's as it is.
func (r *loadResult) mergeCPU(o loadResult) {
	if r.elapsed == 0 {
		r.cpu = o.cpu
		return
	}
	r.cpu = r.cpu.add(o.cpu)
}

func (r loadResult) rps() float64 { return float64(r.ok) / r.elapsed.Seconds() }

// pct returns the p-th percentile latency, or 0 without successful calls.
func (r loadResult) pct(p int) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[(len(r.latencies)-1)*p/100].Round(time.Microsecond)
}

// add merges another run into r (for runs cut into slices); call sort
// before reading percentiles.
func (r *loadResult) add(o loadResult) {
	r.mergeCPU(o)
	r.ok += o.ok
	r.errs += o.errs
	r.latencies = append(r.latencies, o.latencies...)
	r.elapsed += o.elapsed
	r.firstErr = errors.Join(r.firstErr, o.firstErr)
}

// sort orders the merged latencies.
func (r *loadResult) sort() { slices.Sort(r.latencies) }

// errStopLoad, returned by a load's op, ends the calling goroutine's loop
// without counting an error: the op has run out of work (create-signed's
// pre-signed documents) and reports that itself.
var errStopLoad = errors.New("load stopped: no work left")

// runLoad calls op from conns goroutines, each as fast as answers come, for
// d; the HTTP benchmarks of every API share it so their figures compare.
func runLoad(ctx context.Context, conns int, d time.Duration, op func() error) loadResult {
	deadline := time.Now().Add(d)
	var mu sync.Mutex
	var res loadResult
	var wg sync.WaitGroup
	cpu := sampleCPU()
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			var errs int
			var firstErr error
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t := time.Now()
				if err := op(); err != nil {
					if errors.Is(err, errStopLoad) {
						break
					}
					errs++
					if firstErr == nil {
						firstErr = err
					}
					continue
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			res.latencies = append(res.latencies, mine...)
			res.errs += errs
			res.firstErr = errors.Join(res.firstErr, firstErr)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.cpu = cpu.sub(sampleCPU())
	res.ok = len(res.latencies)
	slices.Sort(res.latencies)
	return res
}

// serveLoopback serves h on a loopback port and returns its base URL.
func serveLoopback(h http.Handler) (string, func(), error) { return serveLoopbackLabelled(h, "") }

// serveLoopbackLabelled is serveLoopback whose connection goroutines carry
// the pprof label side=label, so a CPU profile of a benchmark splits the
// server's whole cost (reading, handling, writing) by side.
func serveLoopbackLabelled(h http.Handler, label string) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if label != "" {
		labels := pprof.WithLabels(context.Background(), pprof.Labels("side", label))
		// StateActive is reported on the connection's own goroutine.
		srv.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateActive {
				pprof.SetGoroutineLabels(labels)
			}
		}
	}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// rawClient is a minimal HTTP/1.1 keep-alive client for loopback
// benchmarks: it writes one prepared request and reads answers that carry a
// Content-Length. net/http's client runs two goroutines per connection and
// costs more CPU per request than the servers it measures; on a shared
// machine that CPU is taken from the server and flattens the ratios the
// benchmarks exist to show.
type rawClient struct {
	addr string
	req  []byte
	idle chan *rawConn
}

type rawConn struct {
	c net.Conn
	r *bufio.Reader
}

// newRawClient prepares GET path on the server at baseURL
// (http://host:port) with the given extra header lines, keeping up to
// maxIdle connections open between requests.
func newRawClient(baseURL, path string, header http.Header, maxIdle int) *rawClient {
	var b bytes.Buffer
	host := strings.TrimPrefix(baseURL, "http://")
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: partnerapi-bench\r\n", path, host)
	_ = header.Write(&b)
	b.WriteString("\r\n")
	return &rawClient{addr: host, req: b.Bytes(), idle: make(chan *rawConn, maxIdle)}
}

// get sends the request and returns the status and the body length.
func (c *rawClient) get() (int, int, error) { return c.send(c.req) }

// send writes req, a whole prepared HTTP/1.1 request (a POST with its
// body, say), on an idle connection or a new one and returns the status and
// the body length of the answer.
func (c *rawClient) send(req []byte) (int, int, error) {
	var rc *rawConn
	select {
	case rc = <-c.idle:
	default:
		conn, err := net.Dial("tcp", c.addr)
		if err != nil {
			return 0, 0, err
		}
		rc = &rawConn{c: conn, r: bufio.NewReaderSize(conn, 16<<10)}
	}
	if _, err := rc.c.Write(req); err != nil {
		rc.c.Close()
		return 0, 0, err
	}
	status, n, keep, err := rc.read()
	if err != nil || !keep {
		rc.c.Close()
		return status, n, err
	}
	select {
	case c.idle <- rc:
	default:
		rc.c.Close()
	}
	return status, n, nil
}

// read parses one response: status line, headers, a Content-Length body.
func (rc *rawConn) read() (status, n int, keep bool, err error) {
	line, err := rc.r.ReadSlice('\n')
	if err != nil {
		return 0, 0, false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, 0, false, fmt.Errorf("bad status line %q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, 0, false, fmt.Errorf("bad status line %q", line)
	}
	length, keep := -1, true
	for {
		line, err = rc.r.ReadSlice('\n')
		if err != nil {
			return status, 0, false, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return status, 0, false, fmt.Errorf("bad header line %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil {
				return status, 0, false, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return status, 0, false, errors.New("chunked answers are not supported")
		case bytes.EqualFold(name, []byte("Connection")) && bytes.EqualFold(value, []byte("close")):
			keep = false
		}
	}
	if length < 0 {
		return status, 0, false, errors.New("answer without Content-Length")
	}
	if _, err := rc.r.Discard(length); err != nil {
		return status, 0, false, err
	}
	return status, length, keep, nil
}

// close closes the idle connections.
func (c *rawClient) close() {
	for {
		select {
		case rc := <-c.idle:
			rc.c.Close()
		default:
			return
		}
	}
}

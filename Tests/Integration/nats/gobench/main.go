// nats-gobench: the reference figures for MailboxNATS's benchmark, measured with the Go client
// (nats.go, as Debian packages it) against a running nats-server.
//
//	nats-gobench [-url URL] [-modes pub,pubsub,request] [-sizes 16,256] [-n 1000000] [-requests 20000]
//
// Modes, each run once per payload size:
//
//	pub      one connection publishes n messages and flushes: msgs_per_sec = n / (last flush - start).
//	pubsub   one connection publishes n messages, a second one subscribed to the subject receives
//	         them: msgs_per_sec = n / (last message received - first publish).
//	request  sequential request/reply round trips (after 100 unmeasured ones) from one connection to
//	         a replier on a second connection in this process: p50_us and p99_us of the round trips,
//	         msgs_per_sec = requests per second.
//
// Prints one JSON object per line and run, e.g.
//
//	{"client":"go","mode":"pubsub","payload":16,"messages":1000000,"seconds":0.9,"msgs_per_sec":1100000,"p50_us":null,"p99_us":null}
//
// The URL defaults to $MAILBOX_NATS_URL, else nats://127.0.0.1:4222. Exit status 1 on any error.
// Built by Tests/Integration/nats/go-bench.sh (offline, from Debian's golang-github-nats-io-go-nats-dev).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

type result struct {
	Client     string   `json:"client"`
	Mode       string   `json:"mode"`
	Payload    int      `json:"payload"`
	Messages   int      `json:"messages"`
	Seconds    float64  `json:"seconds"`
	MsgsPerSec float64  `json:"msgs_per_sec"`
	P50us      *float64 `json:"p50_us"`
	P99us      *float64 `json:"p99_us"`
}

var timeout time.Duration

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "nats-gobench: "+format+"\n", args...)
	os.Exit(1)
}

func connect(url, name string) *nats.Conn {
	nc, err := nats.Connect(url, nats.Name(name), nats.Timeout(5*time.Second),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			fmt.Fprintf(os.Stderr, "nats-gobench: async error on %s: %v\n", name, err)
		}))
	if err != nil {
		fail("connect %s: %v", url, err)
	}
	return nc
}

func round(x float64, digits int) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', digits, 64), 64)
	return v
}

func emit(r result) {
	r.Seconds = round(r.Seconds, 4)
	r.MsgsPerSec = round(r.MsgsPerSec, 0)
	line, err := json.Marshal(r)
	if err != nil {
		fail("json: %v", err)
	}
	fmt.Println(string(line))
}

func benchPub(url string, size, n int) result {
	nc := connect(url, "gobench-pub")
	defer nc.Close()
	payload := make([]byte, size)
	subject := fmt.Sprintf("gobench.pub.%d", size)
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := nc.Publish(subject, payload); err != nil {
			fail("pub: publish: %v", err)
		}
	}
	if err := nc.FlushTimeout(timeout); err != nil {
		fail("pub: flush: %v", err)
	}
	elapsed := time.Since(start).Seconds()
	return result{Client: "go", Mode: "pub", Payload: size, Messages: n, Seconds: elapsed, MsgsPerSec: float64(n) / elapsed}
}

func benchPubSub(url string, size, n int) result {
	pubConn := connect(url, "gobench-pubsub-pub")
	defer pubConn.Close()
	subConn := connect(url, "gobench-pubsub-sub")
	defer subConn.Close()
	subject := fmt.Sprintf("gobench.pubsub.%d", size)
	var received int64
	done := make(chan time.Time, 1)
	sub, err := subConn.Subscribe(subject, func(*nats.Msg) {
		if atomic.AddInt64(&received, 1) == int64(n) {
			done <- time.Now()
		}
	})
	if err != nil {
		fail("pubsub: subscribe: %v", err)
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		fail("pubsub: pending limits: %v", err)
	}
	if err := subConn.FlushTimeout(timeout); err != nil { // the subscription is known to the server
		fail("pubsub: flush: %v", err)
	}
	payload := make([]byte, size)
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := pubConn.Publish(subject, payload); err != nil {
			fail("pubsub: publish: %v", err)
		}
	}
	if err := pubConn.FlushTimeout(timeout); err != nil {
		fail("pubsub: flush: %v", err)
	}
	select {
	case end := <-done:
		elapsed := end.Sub(start).Seconds()
		return result{Client: "go", Mode: "pubsub", Payload: size, Messages: n, Seconds: elapsed, MsgsPerSec: float64(n) / elapsed}
	case <-time.After(timeout):
		fail("pubsub: received %d of %d messages within %v", atomic.LoadInt64(&received), n, timeout)
	}
	panic("unreachable")
}

func benchRequest(url string, size, n int) result {
	replier := connect(url, "gobench-replier")
	defer replier.Close()
	requester := connect(url, "gobench-requester")
	defer requester.Close()
	subject := fmt.Sprintf("gobench.request.%d", size)
	if _, err := replier.Subscribe(subject, func(m *nats.Msg) {
		if err := m.Respond(m.Data); err != nil {
			fmt.Fprintf(os.Stderr, "nats-gobench: respond: %v\n", err)
		}
	}); err != nil {
		fail("request: subscribe: %v", err)
	}
	if err := replier.FlushTimeout(timeout); err != nil {
		fail("request: flush: %v", err)
	}
	payload := make([]byte, size)
	for i := 0; i < 100; i++ { // warm-up: the requester's reply subscription, the caches
		if _, err := requester.Request(subject, payload, timeout); err != nil {
			fail("request: warm-up request: %v", err)
		}
	}
	latencies := make([]time.Duration, n)
	start := time.Now()
	for i := 0; i < n; i++ {
		t := time.Now()
		reply, err := requester.Request(subject, payload, timeout)
		if err != nil {
			fail("request %d: %v", i, err)
		}
		latencies[i] = time.Since(t)
		if len(reply.Data) != size {
			fail("request %d: reply of %d bytes, want %d", i, len(reply.Data), size)
		}
	}
	elapsed := time.Since(start).Seconds()
	sort.Slice(latencies, func(a, b int) bool { return latencies[a] < latencies[b] })
	pct := func(p float64) *float64 {
		i := int(p * float64(n-1))
		v := round(float64(latencies[i].Nanoseconds())/1000, 1)
		return &v
	}
	return result{Client: "go", Mode: "request", Payload: size, Messages: n, Seconds: elapsed,
		MsgsPerSec: float64(n) / elapsed, P50us: pct(0.50), P99us: pct(0.99)}
}

func main() {
	defaultURL := os.Getenv("MAILBOX_NATS_URL")
	if defaultURL == "" {
		defaultURL = nats.DefaultURL
	}
	url := flag.String("url", defaultURL, "server URL (default $MAILBOX_NATS_URL, else nats://127.0.0.1:4222)")
	modes := flag.String("modes", "pub,pubsub,request", "comma-separated modes: pub, pubsub, request")
	sizes := flag.String("sizes", "16,256", "comma-separated payload sizes in bytes")
	n := flag.Int("n", 1000000, "messages per pub and pubsub run")
	requests := flag.Int("requests", 20000, "round trips per request run")
	flag.DurationVar(&timeout, "timeout", 60*time.Second, "deadline of one flush, request or pubsub run")
	flag.Parse()
	if *n < 1 || *requests < 1 {
		fail("-n and -requests must be positive")
	}

	var payloadSizes []int
	for _, s := range strings.Split(*sizes, ",") {
		size, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || size < 0 {
			fail("bad payload size %q", s)
		}
		payloadSizes = append(payloadSizes, size)
	}
	for _, mode := range strings.Split(*modes, ",") {
		mode = strings.TrimSpace(mode)
		for _, size := range payloadSizes {
			switch mode {
			case "pub":
				emit(benchPub(*url, size, *n))
			case "pubsub":
				emit(benchPubSub(*url, size, *n))
			case "request":
				emit(benchRequest(*url, size, *requests))
			default:
				fail("unknown mode %q (pub, pubsub, request)", mode)
			}
		}
	}
}

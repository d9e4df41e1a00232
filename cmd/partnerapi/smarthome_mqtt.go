package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/sqldb"
)

// smarthomeMQTT is the smart home API's MQTT gate as serve runs it
// (internal/smarthome/homemqtt): off unless --smarthome-mqtt names a broker.
type smarthomeMQTT struct {
	broker, endpoint, root string
	// registered limits the gate to agents with a credential here
	// (homemqtt Config Agents).
	registered bool
	// lease is the length of the lease that makes one replica the leader
	// (homemqtt ReplicaConfig Lease).
	lease time.Duration
}

func (m *smarthomeMQTT) registerFlags(fs *flag.FlagSet) {
	fs.StringVar(&m.broker, "smarthome-mqtt", "", "MQTT broker (tcp://[user:password@]host:port) on which to play the cloud's side of the protocol for agents under development: publish the retained global configuration, check their up/config and up/status against the catalog, answer findings on down/errors (empty: off)")
	fs.StringVar(&m.endpoint, "smarthome-mqtt-endpoint", "", "http_api_endpoint announced to agents (empty: this server's smart home listener)")
	fs.StringVar(&m.root, "smarthome-mqtt-root", homemqtt.DefaultRoot, "topic root of the global configuration and the agents' topics")
	fs.DurationVar(&m.lease, "smarthome-mqtt-lease", homemqtt.DefaultLease, "every replica on one database may run the gate; one at a time leads (connects to the broker and answers agents), holding a lease in the database that it renews every fifth of this: a leader that cannot renew falls silent after 2/3 of it, and one that died is replaced within about 1.2 times it")
	fs.BoolVar(&m.registered, "smarthome-mqtt-registered-agents", true, "serve only the agents that have a credential (partnerapi smarthome agent create): a message under another agent name is ignored, counted in partnerapi_smarthome_mqtt_unknown_agent_total and logged once a minute (false: every agent name that publishes under the root, for a broker whose own ACLs decide who may)")
}

// gateRef is the Commander the smart home API is built with when serve
// runs the MQTT gate: the replica's side of the gate once its sidecar has
// started it (it sends through the leader, this replica's gate or
// another's: homemqtt Replica), and before and after that
// homemqtt.ErrNotConnected, the 503 with Retry-After of a gate that is
// away for the moment. Without the gate the API has no Commander at all
// (404, smarthome.ErrGateOff).
type gateRef struct {
	g atomic.Pointer[homemqtt.Replica]
}

func (r *gateRef) Command(ctx context.Context, agent string, msg []byte) (string, error) {
	g := r.g.Load()
	if g == nil {
		return "", homemqtt.ErrNotConnected
	}
	return g.Command(ctx, agent, msg)
}

func (r *gateRef) Send(ctx context.Context, agent, kind string, msg []byte) (string, error) {
	g := r.g.Load()
	if g == nil {
		return "", homemqtt.ErrNotConnected
	}
	return g.Send(ctx, agent, kind, msg)
}

// sidecar returns the gate as a sidecar of serve, nil when it is off. The
// replica contends for the gate's lease when the sidecar starts, after the
// listeners are open, so that the announced endpoint can be the smart
// home listener's bound address; a leader whose broker cannot be reached
// logs it, gives the lease up and contends again a lease later.
func (m *smarthomeMQTT) sidecar(svc *smarthome.Service, ref *gateRef, d deps) (*sidecar, error) {
	if m.broker == "" {
		return nil, nil
	}
	u, err := url.Parse(m.broker)
	if err != nil || u.Host == "" || (u.Scheme != "tcp" && u.Scheme != "ssl" && u.Scheme != "tls" && u.Scheme != "ws" && u.Scheme != "wss") {
		// The value may carry the broker's password; the error is printed.
		return nil, fmt.Errorf("--smarthome-mqtt: want tcp://host:port (or ssl://, ws://), got %q", redactURL(m.broker))
	}
	if m.lease < time.Second {
		return nil, fmt.Errorf("--smarthome-mqtt-lease: want 1s or more, got %s", m.lease)
	}
	cfg := homemqtt.Config{Root: m.root, Log: d.log, Metrics: homemqtt.NewMetrics(d.metrics.Registry)}
	if m.registered {
		cfg.Agents = svc
	}
	// SQLite's data directory is held by one serve at a time, so a lease
	// found there is a dead process's: the restarted one takes it at once.
	rc := homemqtt.ReplicaConfig{Store: homesql.New(d.db), Lease: m.lease, Exclusive: d.db.Dialect == sqldb.SQLite}
	if u.User != nil {
		cfg.Username = u.User.Username()
		cfg.Password, _ = u.User.Password()
		u.User = nil // the address is logged; the password must not be
	}
	cfg.Broker = u.String()
	done := make(chan struct{})
	var once sync.Once
	return &sidecar{
		name: "smarthome-mqtt",
		serve: func() error {
			cfg.Endpoint = m.endpoint
			if cfg.Endpoint == "" {
				cfg.Endpoint = listenerURL(d.listenAddr("smarthome"), d.tls.Enabled())
			}
			rc.Gate = cfg
			r, err := homemqtt.StartReplica(rc, svc)
			if err != nil {
				return err
			}
			ref.g.Store(r)
			<-done
			ref.g.Store(nil)
			r.Close()
			return nil
		},
		stop: func(context.Context) error {
			once.Do(func() { close(done) })
			return nil
		},
	}, nil
}

// listenerURL is the URL of a listener bound to addr, with the loopback
// address in place of an unspecified host (":9445", "0.0.0.0:9445").
func listenerURL(addr string, tls bool) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
)

// smarthomeMQTT is the smart home API's MQTT gate as serve runs it
// (internal/smarthome/homemqtt): off unless --smarthome-mqtt names a broker.
type smarthomeMQTT struct {
	broker, endpoint, root string
	// registered limits the gate to agents with a credential here
	// (homemqtt Config Agents).
	registered bool
}

func (m *smarthomeMQTT) registerFlags(fs *flag.FlagSet) {
	fs.StringVar(&m.broker, "smarthome-mqtt", "", "MQTT broker (tcp://[user:password@]host:port) on which to play the cloud's side of the protocol for agents under development: publish the retained global configuration, check their up/config and up/status against the catalog, answer findings on down/errors (empty: off)")
	fs.StringVar(&m.endpoint, "smarthome-mqtt-endpoint", "", "http_api_endpoint announced to agents (empty: this server's smart home listener)")
	fs.StringVar(&m.root, "smarthome-mqtt-root", homemqtt.DefaultRoot, "topic root of the global configuration and the agents' topics")
	fs.BoolVar(&m.registered, "smarthome-mqtt-registered-agents", true, "serve only the agents that have a credential (partnerapi smarthome agent create): a message under another agent name is ignored, counted in partnerapi_smarthome_mqtt_unknown_agent_total and logged once a minute (false: every agent name that publishes under the root, for a broker whose own ACLs decide who may)")
}

// gateRef is the Commander the smart home API is built with when serve
// runs the MQTT gate: the gate once its sidecar has connected it, and
// before and after that homemqtt.ErrNotConnected, the 503 with
// Retry-After of a gate that is away for the moment. Without the gate the
// API has no Commander at all (404, smarthome.ErrGateOff).
type gateRef struct{ g atomic.Pointer[homemqtt.Gate] }

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
// broker is reached when the sidecar starts, after the listeners are open,
// so that the announced endpoint can be the smart home listener's bound
// address; a broker that cannot be reached then stops serve.
func (m *smarthomeMQTT) sidecar(svc *smarthome.Service, ref *gateRef, d deps) (*sidecar, error) {
	if m.broker == "" {
		return nil, nil
	}
	u, err := url.Parse(m.broker)
	if err != nil || u.Host == "" || (u.Scheme != "tcp" && u.Scheme != "ssl" && u.Scheme != "tls" && u.Scheme != "ws" && u.Scheme != "wss") {
		// The value may carry the broker's password; the error is printed.
		return nil, fmt.Errorf("--smarthome-mqtt: want tcp://host:port (or ssl://, ws://), got %q", redactURL(m.broker))
	}
	cfg := homemqtt.Config{Root: m.root, Log: d.log, Metrics: homemqtt.NewMetrics(d.metrics.Registry)}
	if m.registered {
		cfg.Agents = svc
	}
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
			g, err := homemqtt.Start(cfg, svc)
			if err != nil {
				return err
			}
			ref.g.Store(g)
			<-done
			ref.g.Store(nil)
			g.Close()
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

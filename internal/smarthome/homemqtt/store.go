package homemqtt

import (
	"bytes"
	"sync"

	"github.com/eclipse/paho.mqtt.golang/packets"
)

// resendStore is the client library's store of the messages it resends
// after a reconnection (mqtt.Store), kept in memory as mqtt.MemoryStore
// keeps it, but as each message's encoding: Get decodes a copy of its own
// for every caller, where MemoryStore hands out the very packet the
// publisher sent.
//
// That sharing is a data race in the library (eclipse-paho/paho.mqtt.golang
// issue 703): on reconnecting it starts the new connection's writer, runs
// OnConnect and lets publishers through before it resumes, and its resume
// then marks every stored publish as a duplicate (DUP) while the writer may
// still be encoding that same packet. The gate publishes in that window by
// design (onConnect's announcement and resync, a command or a re-ask due
// then), and TestGateKickedByBroker lost to the race detector under load.
// With a copy, resume marks and resends its own packet; the one in flight
// is untouched. The resend itself is QoS 1's at-least-once, as before.
type resendStore struct {
	mu     sync.Mutex
	opened bool
	msgs   map[string][]byte
}

func newResendStore() *resendStore {
	return &resendStore{msgs: map[string][]byte{}}
}

// Open makes the store usable; the library opens it at every Connect.
func (s *resendStore) Open() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opened = true
}

// Close makes the store refuse further use until it is opened again, as
// MemoryStore does; what it holds is kept.
func (s *resendStore) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opened = false
}

// Put keeps m's encoding under key. The library puts a packet before it
// hands it to the connection's writer, so encoding it here (which sets its
// remaining length, as the writer's encoding does again) races with
// nothing.
func (s *resendStore) Put(key string, m packets.ControlPacket) {
	var b bytes.Buffer
	if err := m.Write(&b); err != nil {
		// Writing to a bytes.Buffer fails only on a packet the library
		// could not send either; not keeping it resends nothing.
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opened {
		s.msgs[key] = b.Bytes()
	}
}

// Get is a fresh copy of the packet under key, or nil when there is none
// (or the store is closed), which the library's resume skips.
func (s *resendStore) Get(key string) packets.ControlPacket {
	s.mu.Lock()
	b, ok := s.msgs[key]
	opened := s.opened
	s.mu.Unlock()
	if !ok || !opened {
		return nil
	}
	p, err := packets.ReadPacket(bytes.NewReader(b))
	if err != nil {
		return nil
	}
	return p
}

// All is the keys of every message kept, none while closed.
func (s *resendStore) All() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.opened {
		return nil
	}
	keys := make([]string, 0, len(s.msgs))
	for k := range s.msgs {
		keys = append(keys, k)
	}
	return keys
}

// Del forgets the message under key: the library's on an acknowledgement,
// the gate's when it withdraws a message (withdraw).
func (s *resendStore) Del(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.msgs, key)
}

// Reset forgets every message; the library resets a clean session's store
// at Connect.
func (s *resendStore) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.msgs)
}

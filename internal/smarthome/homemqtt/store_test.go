package homemqtt

import (
	"bytes"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/eclipse/paho.mqtt.golang/packets"
)

// The resend store hands the library's resume a copy of each stored
// message: resume may mark it DUP while the connection's writer encodes the
// packet the publisher sent (the race of eclipse-paho/paho.mqtt.golang
// issue 703, which mqtt.MemoryStore's shared packets let the race detector
// report under TestGateKickedByBroker). Here the two run on goroutines of
// their own with nothing ordering them, so under -race the test fails
// whenever Get hands out the stored packet itself. The copy is the message
// that was put, and the store keeps, forgets and closes as MemoryStore
// does.
func TestResendStoreHandsOutCopies(t *testing.T) {
	for _, tc := range []struct {
		name string
		put  func() packets.ControlPacket
		// mark is what resume does to the packet it got.
		mark func(packets.ControlPacket)
	}{
		{"publish at QoS 1", func() packets.ControlPacket {
			p := packets.NewControlPacket(packets.Publish).(*packets.PublishPacket)
			p.Qos, p.TopicName, p.MessageID, p.Retain, p.Payload = 1, "sberdevices/v1/dev/down/commands", 7, true, []byte(`{"devices":{}}`)
			return p
		}, func(p packets.ControlPacket) { p.(*packets.PublishPacket).Dup = true }},
		{"subscribe", func() packets.ControlPacket {
			p := packets.NewControlPacket(packets.Subscribe).(*packets.SubscribePacket)
			p.MessageID, p.Topics, p.Qoss = 8, []string{"sberdevices/v1/+/up/#"}, []byte{1}
			return p
		}, func(packets.ControlPacket) {}},
		{"pubrel", func() packets.ControlPacket {
			p := packets.NewControlPacket(packets.Pubrel).(*packets.PubrelPacket)
			p.MessageID = 9
			return p
		}, func(packets.ControlPacket) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newResendStore()
			s.Open()
			sent := tc.put()
			const key = "o.7"
			s.Put(key, sent)
			var wg sync.WaitGroup
			var got packets.ControlPacket
			wg.Go(func() { _ = sent.Write(io.Discard) }) // the writer
			wg.Go(func() {                               // resume
				got = s.Get(key)
				if got != nil {
					tc.mark(got)
				}
			})
			wg.Wait()
			if got == nil {
				t.Fatal("Get found nothing under the key put")
			}
			if got == sent {
				t.Fatal("Get handed out the packet that was put")
			}
			// The copy is the message put, as resume marked it; the
			// store keeps it unmarked for the next Get.
			want := tc.put()
			tc.mark(want)
			if encoded(t, got) != encoded(t, want) {
				t.Errorf("Get: %s, want %s", got, want)
			}
			if again := s.Get(key); again == nil || encoded(t, again) != encoded(t, tc.put()) {
				t.Errorf("Get after a marked copy: %v, want the message put", again)
			}
			if keys := s.All(); !slices.Equal(keys, []string{key}) {
				t.Errorf("All: %v, want [%s]", keys, key)
			}
			s.Close()
			if s.Get(key) != nil || s.All() != nil {
				t.Error("a closed store handed out what it keeps")
			}
			s.Put("o.10", tc.put())
			s.Open()
			if keys := s.All(); !slices.Equal(keys, []string{key}) {
				t.Errorf("after a Put while closed, All: %v, want [%s]", keys, key)
			}
			s.Del(key)
			if s.Get(key) != nil || len(s.All()) != 0 {
				t.Error("Del left the message")
			}
			s.Put(key, tc.put())
			s.Reset()
			if len(s.All()) != 0 {
				t.Error("Reset left a message")
			}
		})
	}
}

// encoded is p as it goes on the wire.
func encoded(t *testing.T, p packets.ControlPacket) string {
	t.Helper()
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

package banking

import (
	"context"
	"testing"
)

// expectingStore is a PaymentStore that only counts ExpectCreate's
// announcements and releases.
type expectingStore struct {
	PaymentStore
	expected, released int
}

func (s *expectingStore) ExpectCreate(ctx context.Context) (context.Context, Releaser) {
	s.expected++
	return ctx, s
}

func (s *expectingStore) Release() { s.released++ }

// A create announces itself to a batching store and releases the
// announcement even when it is refused before reaching the store, which
// would otherwise hold the store's next batch back for its whole delay.
func TestCreateReleasesExpectation(t *testing.T) {
	st := &expectingStore{}
	svc := &PaymentService{Store: st}
	if _, err := svc.Create(context.Background(), Principal{}, Payment{}); err == nil {
		t.Fatal("an empty document was accepted")
	}
	if st.expected != 1 || st.released != 1 {
		t.Fatalf("expected %d, released %d; want 1 and 1", st.expected, st.released)
	}
}

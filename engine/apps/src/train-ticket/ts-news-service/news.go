package main

import (
	"sort"
	"sync"
	"time"
)

// News is one item of the home-page list. The JSON field names are the ones the
// ts-ui-dashboard page reads.
type News struct {
	Title     string    `json:"Title"`
	Content   string    `json:"Content"`
	Published time.Time `json:"Published"`
}

type newsStore struct {
	mu    sync.RWMutex
	items []News
}

func mustDate(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

// newNewsStore holds the two items upstream ships plus service notices.
func newNewsStore() *newsStore {
	return &newsStore{items: []News{
		{Title: "News Service Complete", Content: "Congratulations:Your News Service Complete", Published: mustDate("2017-09-01")},
		{Title: "Total Ticket System Complete", Content: "Just a total test", Published: mustDate("2017-09-02")},
		{Title: "Rebooking rules", Content: "A paid ticket can be rebooked once, up to two hours before departure.", Published: mustDate("2018-03-15")},
		{Title: "Refunds", Content: "Cancelling a paid ticket before departure refunds 80% of the price to your account.", Published: mustDate("2018-03-15")},
	}}
}

// visible returns the items published at or before now, newest first.
func (s *newsStore) visible(now time.Time) []News {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]News, 0, len(s.items))
	for _, n := range s.items {
		if !n.Published.After(now) {
			out = append(out, n)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Published.After(out[j].Published) })
	return out
}

// add appends an item; used by the admin console in later releases.
func (s *newsStore) add(n News) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = append(s.items, n)
}

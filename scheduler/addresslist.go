package scheduler

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// AddressList is the address_list of an auto-registered group from the live registry
// rows of its app name (EXECUTOR rows, any order): each address once, ascending,
// comma-joined (scheduler.md §11). Upstream writes whatever it computed; past the
// column's size (AddressListMax bytes, about 4,000 addresses) MySQL refuses it and the
// group keeps an old list for as long as the registrations last. Here the list is
// cut to what fits in max bytes, the newest registrations (registry rows) kept — the
// same ones every pass while nobody registers anew — and left is how many addresses
// were left out.
func AddressList(regs []schema.Registry, max int) (list string, left int) {
	newest := make(map[string]int64, len(regs)) // address → its newest row
	for _, r := range regs {
		if id, ok := newest[r.RegistryValue]; !ok || r.ID > id {
			newest[r.RegistryValue] = r.ID
		}
	}
	addrs := make([]string, 0, len(newest))
	size := -1 // no comma before the first
	for a := range newest {
		addrs = append(addrs, a)
		size += len(a) + 1
	}
	if size > max {
		slices.SortFunc(addrs, func(a, b string) int { return cmp.Compare(newest[b], newest[a]) })
		size = -1
		for i, a := range addrs {
			if size+len(a)+1 > max {
				left = len(addrs) - i
				addrs = addrs[:i]
				break
			}
			size += len(a) + 1
		}
	}
	slices.Sort(addrs)
	return strings.Join(addrs, ","), left
}

// addressCount is the number of addresses in a comma-joined list.
func addressCount(list string) int {
	if list == "" {
		return 0
	}
	return strings.Count(list, ",") + 1
}

// setAddressList writes a group's list, halving it while the column refuses it as too
// long (a column smaller than the upstream layouts' TEXT); left counts the addresses
// of list that were not written.
func (s *Scheduler) setAddressList(ctx context.Context, g schema.Group, regs []schema.Registry, list string, left int, now time.Time) (int, error) {
	budget := len(list)
	for {
		err := s.store.SetGroupAddresses(ctx, g.ID, list, now)
		if !errors.Is(err, schema.ErrTooLong) || budget < 64 {
			return left, err
		}
		budget /= 2
		list, left = AddressList(regs, budget)
	}
}

// noteAddressesLeftOut warns once when an app's list starts leaving addresses out, and
// says when it holds them all again.
func (s *Scheduler) noteAddressesLeftOut(g schema.Group, live, left int) {
	s.metrics.prom.leftOut.WithLabelValues(g.AppName).Set(float64(left))
	before, _ := s.metrics.leftOut.Load(g.AppName)
	s.metrics.leftOut.Store(g.AppName, left)
	switch was, _ := before.(int); {
	case left > 0 && was == 0:
		s.log.Warn("executor addresses left out of the group's address_list: the list would not fit into the column; the newest registrations are kept",
			"group", g.ID, "app", g.AppName, "live", live, "left_out", left, "column_bytes", schema.AddressListMax)
	case left == 0 && was > 0:
		s.log.Info("the group's address_list holds all its executors again", "group", g.ID, "app", g.AppName, "live", live)
	}
}

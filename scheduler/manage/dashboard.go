package manage

import (
	"context"
	"strings"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/route"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Chart is the dashboard's per-day trigger report over a date range.
type Chart struct {
	Days         []string // yyyy-MM-dd
	Running      []int
	Success      []int
	Fail         []int
	RunningTotal int
	SuccessTotal int
	FailTotal    int
}

// ChartInfo reads the report days between two "yyyy-MM-dd HH:mm:ss" dates; with no
// days in range (or a date missing) it is the last seven days with zeros, as upstream.
func (s *Service) ChartInfo(ctx context.Context, startDate, endDate string) (Chart, error) {
	var reports []schema.LogReport
	if strings.TrimSpace(startDate) != "" && strings.TrimSpace(endDate) != "" {
		from, err := time.ParseInLocation(DateTimeLayout, startDate, s.loc)
		if err != nil {
			return Chart{}, s.errInvalid("start_date")
		}
		to, err := time.ParseInLocation(DateTimeLayout, endDate, s.loc)
		if err != nil {
			return Chart{}, s.errInvalid("end_date")
		}
		if reports, err = s.store.LogReports(ctx, from, to); err != nil {
			return Chart{}, err
		}
	}
	c := Chart{Days: []string{}, Running: []int{}, Success: []int{}, Fail: []int{}}
	for _, r := range reports {
		c.Days = append(c.Days, r.TriggerDay.In(s.loc).Format("2006-01-02"))
		c.Running = append(c.Running, r.RunningCount)
		c.Success = append(c.Success, r.SucCount)
		c.Fail = append(c.Fail, r.FailCount)
		c.RunningTotal += r.RunningCount
		c.SuccessTotal += r.SucCount
		c.FailTotal += r.FailCount
	}
	if len(reports) == 0 {
		today := s.clk.Now().In(s.loc)
		for i := 6; i >= 0; i-- {
			c.Days = append(c.Days, today.AddDate(0, 0, -i).Format("2006-01-02"))
			c.Running = append(c.Running, 0)
			c.Success = append(c.Success, 0)
			c.Fail = append(c.Fail, 0)
		}
	}
	return c, nil
}

// Totals are the dashboard's four numbers.
type Totals struct {
	JobInfoCount       int
	JobLogCount        int
	JobLogSuccessCount int
	ExecutorCount      int
}

// DashboardTotals counts jobs, reported runs and distinct executor addresses.
func (s *Service) DashboardTotals(ctx context.Context) (Totals, error) {
	var t Totals
	var err error
	if t.JobInfoCount, err = s.store.CountJobs(ctx); err != nil {
		return t, err
	}
	running, suc, fail, err := s.store.ReportTotals(ctx)
	if err != nil {
		return t, err
	}
	t.JobLogCount, t.JobLogSuccessCount = running+suc+fail, suc
	groups, err := s.store.Groups(ctx, -1)
	if err != nil {
		return t, err
	}
	seen := map[string]bool{}
	for _, g := range groups {
		for _, a := range route.SplitAddressList(g.AddressList) {
			if !javaBlank(a) {
				seen[a] = true
			}
		}
	}
	t.ExecutorCount = len(seen)
	return t, nil
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
)

// floodReply is one answer of the executor API.
type floodReply struct {
	status int
	code   int
	msg    string
}

func postAPI(hc *http.Client, url, token string, method string, body []byte) (floodReply, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return floodReply{}, err
	}
	req.Header.Set("Content-Type", "application/json;charset=UTF-8")
	req.Header.Set(protocol.HeaderAccessToken, token)
	res, err := hc.Do(req)
	if err != nil {
		return floodReply{}, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return floodReply{}, err
	}
	r := floodReply{status: res.StatusCode}
	r.code, r.msg, _, err = protocol.DecodeReply(data)
	if err != nil {
		return r, fmt.Errorf("%s answered %q: %w", url, data, err)
	}
	return r, nil
}

// Executor faults, a flood of registrations: 2,000 distinct executor
// addresses of three auto-registered groups register again and again from 16
// connections, a quarter of them withdraw at the end (registryRemove), and malformed
// registrations are mixed in — while a normal group's five jobs fire every second. No
// answer is a 5xx; malformed ones are refused with a reason, never "database
// unavailable"; the registry ends with exactly one row per live address; after the
// registry monitor each group's address_list is exactly its live addresses; the admin's
// goroutines and memory come back to where they were; and every planned fire of the
// normal jobs happened once. CI floods for 10 s; XXL_FLOOD_DURATION sets longer.
func TestRegistrationFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and floods it for 10 s; skipped with -short")
	}
	t.Parallel()
	flood := 10 * time.Second
	if v := os.Getenv("XXL_FLOOD_DURATION"); v != "" {
		var err error
		flood, err = time.ParseDuration(v)
		require.NoError(t, err, "XXL_FLOOD_DURATION")
	}
	const addresses, workers = 2000, 16
	apps := []string{"flood-a", "flood-b", "flood-c"}
	c := startCluster(t, 1, 5)
	admin := c.admins[0]
	ctx := context.Background()
	for _, app := range apps {
		c.db.Exec(t, "INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time) VALUES (?, ?, 0, NULL, NOW())", app, app)
	}
	addr := func(i int) string { return fmt.Sprintf("http://10.%d.%d.%d:9999/", 1+i/65536, (i/256)%256, i%256) }
	appOf := func(i int) string { return apps[i%len(apps)] }
	removed := func(i int) bool { return i%4 == 0 }
	regBody := func(i int) []byte {
		return protocol.RegistryParam{RegistryGroup: "EXECUTOR", RegistryKey: appOf(i), RegistryValue: addr(i)}.AppendJSON(nil)
	}
	long := strings.Repeat("k", 300)
	malformed := [][]byte{
		[]byte(`{`), []byte(`null`), []byte(`[]`), []byte(`{"registryGroup":"EXECUTOR","registryKey":"flood-a"}`),
		[]byte(`{"registryGroup":"EXECUTOR","registryKey":"flood-a","registryValue":"ftp://10.0.0.1/"}`),
		[]byte(`{"registryGroup":"EXECUTOR","registryKey":"flood-a","registryValue":"javascript:alert(1)"}`),
		[]byte(`{"registryGroup":"EXECUTOR","registryKey":"` + long + `","registryValue":"http://10.9.9.9:1/"}`),
		[]byte(`{"registryGroup":"EXECUTOR","registryKey":"flood-a","registryValue":"http://10.9.9.9:1/` + long + `"}`),
		[]byte(`{"registryGroup":"` + strings.Repeat("G", 60) + `","registryKey":"flood-a","registryValue":"http://10.9.9.9:1/"}`),
		[]byte(`{"registryGroup":" ","registryKey":"flood-a","registryValue":"http://10.9.9.9:1/"}`),
		[]byte(`{"registryGroup":"EXECUTOR","registryKey":["x"],"registryValue":"http://10.9.9.9:1/"}`),
	}

	// Scheduling and memory before the flood.
	time.Sleep(time.Until(time.UnixMilli(c.first).Add(3 * time.Second)))
	base := scrape(t, admin.base)

	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	var sent, refused, fiveXX atomic.Int64
	var firstErr atomic.Value
	fail := func(format string, args ...any) {
		firstErr.CompareAndSwap(nil, fmt.Sprintf(format, args...))
	}
	deadline := time.Now().Add(flood)
	var wg sync.WaitGroup
	peak := base
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // the admin's figures during the flood
		defer close(sampled)
		for {
			select {
			case <-stopSampling:
				return
			case <-time.After(time.Second):
			}
			if s, err := scrapeErr(admin.base); err == nil {
				peak.Goroutines, peak.RSS = max(peak.Goroutines, s.Goroutines), max(peak.RSS, s.RSS)
			}
		}
	}()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			// Each worker owns the addresses i ≡ w (mod workers), so each address's
			// calls are in order and its last call decides whether it is live.
			for round := 0; ; round++ {
				last := !time.Now().Before(deadline)
				for i := w; i < addresses; i += workers {
					uri := "/api/registry"
					if last && removed(i) {
						uri = "/api/registryRemove"
					}
					r, err := postAPI(hc, admin.base+uri, "crash-token", http.MethodPost, regBody(i))
					sent.Add(1)
					switch {
					case err != nil:
						fail("%s %s: %v", uri, addr(i), err)
					case r.status >= 500:
						fiveXX.Add(1)
					case r.code != 200:
						fail("%s %s refused: %d %s", uri, addr(i), r.code, r.msg)
					}
					if i%50 == w%50 { // a malformed or unauthorised call now and then
						body := malformed[(i/50+round)%len(malformed)]
						token := "crash-token"
						if round%3 == 1 {
							token = "wrong"
						}
						r, err := postAPI(hc, admin.base+"/api/registry", token, http.MethodPost, body)
						sent.Add(1)
						switch {
						case err != nil:
							fail("malformed %s: %v", body, err)
						case r.status >= 500:
							fiveXX.Add(1)
						case r.code != 500:
							fail("malformed %s accepted: %d %s", body, r.code, r.msg)
						case strings.Contains(r.msg, "database"):
							fail("malformed %s refused as a database problem: %s", body, r.msg)
						default:
							refused.Add(1)
						}
					}
				}
				if last {
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(stopSampling)
	<-sampled
	hc.CloseIdleConnections()
	if v := firstErr.Load(); v != nil {
		t.Fatal(v)
	}
	require.Zero(t, fiveXX.Load(), "5xx answers")

	// One row per live address, nothing else under EXECUTOR.
	want := map[string][]string{}
	live := 0
	for i := 0; i < addresses; i++ {
		if !removed(i) {
			want[appOf(i)] = append(want[appOf(i)], addr(i))
			live++
		}
	}
	require.Equal(t, live, c.db.Count(t, "xxl_job_registry", "registry_group = 'EXECUTOR'"))
	require.Zero(t, c.db.Count(t, "(SELECT 1 FROM xxl_job_registry GROUP BY registry_group, registry_key, registry_value HAVING COUNT(*) > 1) d", ""))
	for app, list := range want {
		require.Equal(t, len(list), c.db.Count(t, "xxl_job_registry", "registry_group = 'EXECUTOR' AND registry_key = ?", app))
	}
	// The registry monitor (every 30 s) writes each auto group's address list.
	for app, list := range want {
		slices.Sort(list)
		wantList := strings.Join(list, ",")
		waitFor(t, "address_list of "+app, 75*time.Second, func() bool {
			var got string
			require.NoError(t, c.db.SQL.QueryRowContext(ctx, "SELECT COALESCE(address_list, '') FROM xxl_job_group WHERE app_name = ?", app).Scan(&got))
			return got == wantList
		})
	}

	// Goroutines come back; memory does not keep what the flood needed.
	var after procMetrics
	waitFor(t, "goroutines back to their level before the flood", 60*time.Second, func() bool {
		after = scrape(t, admin.base)
		return after.Goroutines <= base.Goroutines+10
	})
	require.Less(t, after.RSS, base.RSS+128<<20, "memory after the flood")

	total := c.verify(t, c.stopAll(t), 0)
	t.Logf("%d registry calls in %v (%.0f/s) from %d connections, %d malformed refused, none 5xx; %d live rows; "+
		"goroutines %.0f before, %.0f peak, %.0f after; RSS %.1f MiB before, %.1f MiB peak, %.1f MiB after; normal jobs: %d fires, none missing, none twice",
		sent.Load(), flood, float64(sent.Load())/flood.Seconds(), workers, refused.Load(), live,
		base.Goroutines, peak.Goroutines, after.Goroutines, base.RSS/(1<<20), peak.RSS/(1<<20), after.RSS/(1<<20), total)
}

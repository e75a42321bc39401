package console

import (
	"bytes"
	"errors"
	"mime/multipart"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// Hostile input: fuzz targets for the console's form decoding — the
// urlencoded and multipart parsers and the binders of the job, group and user forms,
// the paging parameters and the 3.3+ ids[] list. Seeds are form bodies as the 2.4.2 and
// 3.4.2 consoles post them (admin-http.md §5.2–5.6).

// formSeeds are realistic console bodies: 2.4.2 jQuery posts and 3.4.2 posts.
var formSeeds = []string{
	// 2.4.2 /jobinfo/add (admin-http.md §5.2.3)
	"jobGroup=1&jobDesc=%E6%B5%8B%E8%AF%95%E4%BB%BB%E5%8A%A11&author=XXL&alarmEmail=&scheduleType=CRON&scheduleConf=0+0+0+*+*+%3F&cronGen_display=0+0+0+*+*+%3F&schedule_conf_CRON=0+0+0+*+*+%3F&schedule_conf_FIX_RATE=&schedule_conf_FIX_DELAY=&executorHandler=demoJobHandler&executorParam=&executorRouteStrategy=FIRST&childJobId=&misfireStrategy=DO_NOTHING&executorBlockStrategy=SERIAL_EXECUTION&executorTimeout=0&executorFailRetryCount=0&glueType=BEAN&glueSource=&glueRemark=GLUE%E4%BB%A3%E7%A0%81%E5%88%9D%E5%A7%8B%E5%8C%96",
	// 3.4.2 /jobinfo/update
	"id=2&jobGroup=1&jobDesc=demo&author=XXL&alarmEmail=a%40b.c%2Cd%40e.f&scheduleType=FIX_RATE&scheduleConf=30&executorHandler=demoJobHandler&executorParam=a%3D1%3Bb%3D2&executorRouteStrategy=SHARDING_BROADCAST&childJobId=3%2C4&misfireStrategy=FIRE_ONCE_NOW&executorBlockStrategy=COVER_EARLY&executorTimeout=60&executorFailRetryCount=2&glueType=GLUE_SHELL&glueRemark=x",
	// /jobgroup/save and /update
	"appname=xxl-job-executor-sample&title=%E7%A4%BA%E4%BE%8B%E6%89%A7%E8%A1%8C%E5%99%A8&addressType=0&addressList=",
	"id=1&appname=xxl-job-executor-sample&title=demo&addressType=1&addressList=http%3A%2F%2F127.0.0.1%3A9999%2F%2Chttp%3A%2F%2F10.0.0.2%3A9999%2F",
	// /user/add (2.4.2: permission as several values; 3.4.2: joined)
	"username=ops&password=123456&role=0&permission=1&permission=3",
	"id=2&username=ops&password=&role=1&permission=1%2C2",
	// paging and log filters (≤3.2 and 3.3+)
	"start=0&length=10&jobGroup=0&jobId=0&logStatus=-1&filterTime=2024-01-01+00%3A00%3A00+-+2024-01-31+23%3A59%3A59",
	"offset=20&pagesize=50&jobGroup=1&jobId=2&logStatus=2&filterTime=",
	"jobGroup=1&jobId=0&type=9",
	// 3.3+ ids[] and dashboard dates
	"ids%5B%5D=5", "ids[]=1&ids[]=2", "ids=7%2C8", "startDate=2024-01-01+00%3A00%3A00&endDate=2024-01-07+23%3A59%3A59",
	// odd shapes
	"", "&&", "=", "a", "a=1=2", "%zz=%", "id=%2B1", "id=-0", "id=99999999999999999999", "ids%5B%5D=1,%202,,3",
	"k=v;jsessionid=x", "x=%00%ff%FE", "id=1&id=2",
}

func addFormSeeds(f *testing.F) {
	for _, s := range formSeeds {
		f.Add(s)
	}
}

// encodeForm writes a form back as an urlencoded body, every value of every key.
func encodeForm(fm form) string {
	var b strings.Builder
	keys := make([]string, 0, len(fm))
	for k := range fm {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range fm[k] {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(url.QueryEscape(k) + "=" + url.QueryEscape(v))
		}
	}
	return b.String()
}

// The urlencoded parser takes any text: no panic, at most one value per non-empty
// '&'-separated pair, and what it read encodes back to a body that parses the same.
func FuzzFormQuery(f *testing.F) {
	addFormSeeds(f)
	f.Fuzz(func(t *testing.T, q string) {
		fm := form{}
		fm.addQuery(q)
		n := 0
		for _, vs := range fm {
			n += len(vs)
		}
		require.LessOrEqual(t, n, strings.Count(q, "&")+1)
		back := form{}
		back.addQuery(encodeForm(fm))
		if len(fm) == 0 {
			require.Empty(t, back)
			return
		}
		require.Equal(t, fm, back)
	})
}

// multipartSafe reports whether a field name can be written in a Content-Disposition
// header by mime/multipart and read back unchanged.
func multipartSafe(name string) bool {
	if name == "" || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' {
			return false
		}
	}
	return true
}

// The multipart parser (the console's FormData posts) never panics, errors are
// single-line, and fields it read are written back by mime/multipart and read again
// the same (file parts are skipped, as the servlet API's getParameter skips them).
func FuzzFormMultipart(f *testing.F) {
	build := func(fields ...string) []byte {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		_ = w.SetBoundary("----WebKitFormBoundary7MA4YWxkTrZu0gW")
		for i := 0; i+1 < len(fields); i += 2 {
			_ = w.WriteField(fields[i], fields[i+1])
		}
		fw, _ := w.CreateFormFile("file", "a.txt")
		_, _ = fw.Write([]byte("ignored"))
		_ = w.Close()
		return buf.Bytes()
	}
	const bnd = "----WebKitFormBoundary7MA4YWxkTrZu0gW"
	f.Add(build("id", "3", "glueSource", "#!/bin/bash\necho \"hi\"\r\nexit 0\n", "glueRemark", "v2"), bnd)
	f.Add(build("jobGroup", "1", "jobDesc", "多行\n描述", "permission", "1", "permission", "2"), bnd)
	f.Add([]byte("--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--x--\r\n"), "x")
	f.Add([]byte("--x\r\nContent-Disposition: form-data; name=a\r\n\r\n"), "x")
	f.Add([]byte("garbage"), "")
	f.Fuzz(func(t *testing.T, body []byte, boundary string) {
		fm := form{}
		if err := fm.addMultipart(body, boundary); err != nil {
			require.NotContains(t, err.Error(), "\n")
			return
		}
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		want := form{}
		for k, vs := range fm {
			if !multipartSafe(k) {
				continue
			}
			for _, v := range vs {
				require.NoError(t, w.WriteField(k, v))
			}
			want[k] = vs
		}
		require.NoError(t, w.Close())
		back := form{}
		require.NoError(t, back.addMultipart(buf.Bytes(), w.Boundary()))
		require.Equal(t, want, back)
	})
}

// parseThroughFiber runs parseForm on a request built as fasthttp builds one and
// returns the query string the request carries (a '#' ends it, as in a URL).
func parseThroughFiber(query, contentType string, body []byte) (form, string, error) {
	app := fiber.New()
	var req fasthttp.RequestCtx
	req.Request.Header.SetMethod(fiber.MethodPost)
	req.Request.SetRequestURI("/x?" + query)
	req.Request.Header.SetContentType(contentType)
	req.Request.SetBody(body)
	c := app.AcquireCtx(&req)
	defer app.ReleaseCtx(c)
	f, err := parseForm(c)
	return f, string(c.Request().URI().QueryString()), err
}

// parseForm merges query and body, caps the body, and answers only form errors.
func FuzzParseForm(f *testing.F) {
	for _, s := range formSeeds {
		f.Add("", "application/x-www-form-urlencoded; charset=UTF-8", []byte(s))
	}
	f.Add("id=1", "multipart/form-data; boundary=b", []byte("--b\r\nContent-Disposition: form-data; name=\"id\"\r\n\r\n2\r\n--b--\r\n"))
	f.Add("offset=0&pagesize=10", "application/json", []byte(`{"id":1}`))
	f.Add("", "multipart/form-data", []byte("x"))
	f.Add("", "application/x-www-form-urlencoded;;;", []byte("a=1"))
	f.Fuzz(func(t *testing.T, query, contentType string, body []byte) {
		fm, sent, err := parseThroughFiber(query, contentType, body)
		if err != nil {
			require.NotContains(t, err.Error(), "\n")
			return
		}
		want := form{}
		want.addQuery(sent)
		for k, vs := range want { // the query's values come first
			require.GreaterOrEqual(t, len(fm[k]), len(vs), "key %q", k)
			require.Equal(t, vs, fm[k][:len(vs)], "key %q", k)
		}
	})
}

// checkInt checks what form.int made of a value: def for "", the value for a Java int,
// otherwise a badNumber naming the field.
func checkInt(t *testing.T, fm form, key string, got int, err error, def int) {
	t.Helper()
	v := fm.str(key)
	if err != nil {
		var bn *badNumber
		require.True(t, errors.As(err, &bn), "%v", err)
		require.Equal(t, key, bn.field)
		_, perr := strconv.Atoi(v)
		require.Error(t, perr, "%q was refused", v)
		return
	}
	if v == "" {
		require.Equal(t, def, got)
		return
	}
	n, perr := strconv.Atoi(v)
	require.NoError(t, perr)
	require.Equal(t, n, got)
}

// The binders of the job, group and user forms: each either names one unreadable
// number or returns the posted values, and the bound value posted again binds equal.
func FuzzBindForms(f *testing.F) {
	addFormSeeds(f)
	f.Fuzz(func(t *testing.T, q string) {
		fm := form{}
		fm.addQuery(q)

		if job, err := jobInput(fm); err == nil {
			require.Equal(t, fm.first("jobDesc", "name"), job.JobDesc)
			require.Equal(t, fm.str("glueSource"), job.GlueSource)
			checkInt(t, fm, "id", job.ID, nil, 0)
			checkInt(t, fm, "executorTimeout", job.ExecutorTimeout, nil, 0)
			again, err := jobInput(form{
				"id": {strconv.Itoa(job.ID)}, "jobGroup": {strconv.Itoa(job.JobGroup)}, "jobDesc": {job.JobDesc},
				"author": {job.Author}, "alarmEmail": {job.AlarmEmail}, "scheduleType": {job.ScheduleType},
				"scheduleConf": {job.ScheduleConf}, "misfireStrategy": {job.MisfireStrategy},
				"executorRouteStrategy": {job.ExecutorRouteStrategy}, "executorHandler": {job.ExecutorHandler},
				"executorParam": {job.ExecutorParam}, "executorBlockStrategy": {job.ExecutorBlockStrategy},
				"executorTimeout": {strconv.Itoa(job.ExecutorTimeout)}, "executorFailRetryCount": {strconv.Itoa(job.ExecutorFailRetryCount)},
				"glueType": {job.GlueType}, "glueSource": {job.GlueSource}, "glueRemark": {job.GlueRemark},
				"childJobId": {job.ChildJobID}, "triggerStatus": {strconv.Itoa(job.TriggerStatus)},
			})
			require.NoError(t, err)
			require.Equal(t, job, again)
		} else {
			var bn *badNumber
			require.True(t, errors.As(err, &bn), "%v", err)
			require.Contains(t, []string{"id", "jobGroup", "executorTimeout", "executorFailRetryCount", "triggerStatus"}, bn.field)
		}

		if g, err := groupInput(fm); err == nil {
			checkInt(t, fm, "addressType", g.AddressType, nil, 0)
			again, err := groupInput(form{"id": {strconv.Itoa(g.ID)}, "appname": {g.AppName}, "title": {g.Title},
				"addressType": {strconv.Itoa(g.AddressType)}, "addressList": {g.AddressList}})
			require.NoError(t, err)
			require.Equal(t, g, again)
		} else {
			var bn *badNumber
			require.True(t, errors.As(err, &bn), "%v", err)
			require.Contains(t, []string{"id", "addressType"}, bn.field)
		}

		if u, err := userInput(fm); err == nil {
			require.Equal(t, strings.Join(append(slices.Clone(fm["permission"]), fm["permission[]"]...), ","), u.Permission)
			again, err := userInput(form{"id": {strconv.Itoa(u.ID)}, "username": {u.Username}, "password": {u.Password},
				"role": {strconv.Itoa(u.Role)}, "permission": {u.Permission}})
			require.NoError(t, err)
			require.Equal(t, u, again)
		}

		// Paging: a page is never negative, empty or larger than maxPage.
		r := &call{f: fm}
		if off, limit, err := r.paging(); err == nil {
			require.GreaterOrEqual(t, off, 0)
			require.True(t, limit >= 1 && limit <= maxPage, "limit %d", limit)
		}

		// ids[]: every comma item a Java int, or an error naming ids; the list posted
		// again as one joined value reads back the same.
		ids, err := fm.ids()
		if err != nil {
			var bn *badNumber
			require.True(t, errors.As(err, &bn))
			require.Equal(t, "ids", bn.field)
			return
		}
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = strconv.Itoa(id)
		}
		back, err := form{"ids[]": {strings.Join(parts, ",")}}.ids()
		require.NoError(t, err)
		require.Equal(t, ids, back)
	})
}

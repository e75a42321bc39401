package ui_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
)

// The job list has a tag filter beside the others (the list script sends it with
// them), and the job form a tags field with its rules, in the page's language.
func TestJobsPageTags(t *testing.T) {
	t.Parallel()
	b := setup(t, i18n.En)
	admin := b.login(t, "admin", "123456")
	p := b.get(t, "/jobinfo", admin)
	has(t, p, `<input type="search" name="tag" id="f-tag"`, "tag filter")
	has(t, p, `<input type="text" name="tags" id="job-tags"`, "form field")
	has(t, p, "Words of a-z, 0-9 and - _ . : /, separated by commas.", "hint")
	src := regexp.MustCompile(`src="` + ctxPath + `([^"]*/jobs\.js)"`).FindStringSubmatch(p.body)
	require.NotNil(t, src, "the page loads jobs.js")
	has(t, b.get(t, src[1], admin), "author: '', tag: '' }", "the list sends the filter")
}

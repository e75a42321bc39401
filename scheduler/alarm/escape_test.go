package alarm

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMessageHTMLKeepsOnlyTheAdminsMarkup(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"a<br>b<BR/>c<br />d", "a<br>b<br>c<br>d"},
		{`<a href="http://x">y</a>`, "&lt;a href=&#34;http://x&#34;&gt;y&lt;/a&gt;"},
		{"&amp; &lt;b&gt;", "&amp;amp; &amp;lt;b&amp;gt;"},
		{`<br><br><span style="color:#00c0ef;" > >>T<< </span><br>x`,
			`<br><br><span style="color:#00c0ef;" > &gt;&gt;T&lt;&lt; </span><br>x`},
		{`<span style="color:#F39C12;" >retry</span>`, `<span style="color:#F39C12;" >retry</span>`},
		// A header cut off by the length limit is closed; a stray </span> is text.
		{`<span style="color:#00c0ef;" > >>Trig`, `<span style="color:#00c0ef;" > &gt;&gt;Trig</span>`},
		{"x</span><td>", "x&lt;/span&gt;&lt;td&gt;"},
		// Any other span, or attributes added to a header, are text.
		{`<span style="color:red">x</span>`, "&lt;span style=&#34;color:red&#34;&gt;x&lt;/span&gt;"},
		{"<br", "&lt;br"},
		{"<scr<br>ipt>", "&lt;scr<br>ipt&gt;"},
	} {
		require.Equal(t, c.want, MessageHTML(c.in), c.in)
	}
}

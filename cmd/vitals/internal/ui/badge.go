package ui

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vitals-dev/vitals/health"
)

// BadgePrefix is where the badges are: BadgePrefix+NAME+".svg" a check's,
// BadgePrefix+"level/"+LEVEL+".svg" a level's.
const BadgePrefix = "/ui/badge/"

// badgeColours are a badge's colours by the status it says, those of
// Gatus's health badge (up #40cc11, down #c7130a) and of its yellow for a
// warning; the statuses that decide nothing are grey.
var badgeColours = map[string]string{
	"pass":    "#40cc11",
	"warn":    "#ccb311",
	"fail":    "#c7130a",
	"pending": "#9f9f9f",
	"stopped": "#9f9f9f",
}

// Badges serves the badges: shields-style SVG images, each a label (a
// check's or a level's name) and a status in words and in colour, for a
// README or a dashboard to embed:
//
//	GET /ui/badge/NAME.svg          a check's status: pass, warn, fail, pending or stopped
//	GET /ui/badge/level/LEVEL.svg   a level's (startup, live, ready): pass or fail
//
// A badge says a status and never why, as the probe endpoints' codes do,
// so the agent serves them to every client, where the page is guarded. An
// unknown check or level is 404. A badge is asked again each time
// (Cache-Control: no-cache), and may be embedded by any origin.
func (p *Page) Badges() http.Handler {
	return http.HandlerFunc(p.serveBadge)
}

func (p *Page) serveBadge(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	// An SVG opened on its own runs nothing and loads nothing.
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	// Embedded by a dashboard or a README's proxy: another origin.
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, fmt.Sprintf("method %s not allowed: a badge only reads (use GET or HEAD)", r.Method), http.StatusMethodNotAllowed)
		return
	}
	label, status, ok := p.badgeStatus(r.URL.Path)
	if !ok {
		http.Error(w, fmt.Sprintf("no badge at %s: try %sNAME.svg for a check, %slevel/ready.svg for a level", r.URL.Path, BadgePrefix, BadgePrefix), http.StatusNotFound)
		return
	}
	body := Badge(label, status)
	h.Set("Content-Type", "image/svg+xml")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// badgeStatus is the label and status of the badge at urlPath; false when
// it names no check or level.
func (p *Page) badgeStatus(urlPath string) (label, status string, ok bool) {
	name, ok := strings.CutPrefix(urlPath, BadgePrefix)
	if !ok {
		return "", "", false
	}
	if name, ok = strings.CutSuffix(name, ".svg"); !ok {
		return "", "", false
	}
	if l, ok := strings.CutPrefix(name, "level/"); ok {
		var level health.Level
		if level.UnmarshalText([]byte(l)) != nil {
			return "", "", false
		}
		// The Checker reads what the probes read, without a Snapshot.
		if p.m.Checker(level)(nil) != nil {
			return l, "fail", true
		}
		return l, "pass", true
	}
	c, ok := p.m.CheckState(name)
	if !ok {
		return "", "", false
	}
	if c.Stopped {
		return name, "stopped", true
	}
	return name, c.Status.String(), true
}

// Badge is the SVG of a badge that says label and status, coloured by the
// status (grey for one it does not know), in the shape shields.io draws:
// the label on grey, the status on its colour, in Verdana 11px.
func Badge(label, status string) []byte {
	colour, ok := badgeColours[status]
	if !ok {
		colour = badgeColours["pending"]
	}
	lw, sw := textWidth(label)+badgePadding, textWidth(status)+badgePadding
	width := lw + sw
	var b bytes.Buffer
	text := escape(label + ": " + status)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="20" role="img" aria-label="%s">`, width, text)
	fmt.Fprintf(&b, `<title>%s</title>`, text)
	b.WriteString(`<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>`)
	fmt.Fprintf(&b, `<clipPath id="r"><rect width="%d" height="20" rx="3" fill="#fff"/></clipPath>`, width)
	fmt.Fprintf(&b, `<g clip-path="url(#r)"><rect width="%d" height="20" fill="#555"/><rect x="%d" width="%d" height="20" fill="%s"/><rect width="%d" height="20" fill="url(#s)"/></g>`,
		lw, lw, sw, colour, width)
	b.WriteString(`<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">`)
	for _, t := range []struct {
		x    int
		text string
	}{{lw / 2, label}, {lw + sw/2, status}} {
		// A shadow under each text, for contrast on a light colour.
		fmt.Fprintf(&b, `<text x="%d" y="15" fill="#010101" fill-opacity=".3">%s</text><text x="%d" y="14">%s</text>`, t.x, escape(t.text), t.x, escape(t.text))
	}
	b.WriteString(`</g></svg>`)
	return b.Bytes()
}

// badgePadding is the space around each text of a badge, 5 pixels a side,
// as shields.io leaves.
const badgePadding = 10

// textWidth is about how wide s is in Verdana 11px: 7 pixels a character,
// its average, so that a label rarely overflows its part.
func textWidth(s string) int { return 7 * utf8.RuneCountInString(s) }

func escape(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}

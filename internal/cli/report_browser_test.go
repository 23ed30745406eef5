package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/report"
)

// browserCheck is put at the top of a copy of each report: it records
// script errors and, once the page's fonts are ready, writes what it found
// into a <pre id="wattsched-check"> that --dump-dom prints: the figures
// drawn, the font, every text of a figure that is not drawn wholly inside
// its SVG (a clipped legend label, say; 3 px of slack for the line box
// above a title's glyphs and left of a rotated axis label) and where the first "verdict"
// column heading ends against the viewport's width.
const browserCheck = `<script>window.__errs=[];window.addEventListener('error',function(e){window.__errs.push(String(e.message))});
document.addEventListener('DOMContentLoaded',function(){document.fonts.ready.then(function(){
var figs=document.querySelectorAll('figure'),ok=0;
figs.forEach(function(f){var s=f.querySelector('svg');if(!s)return;var r=s.getBoundingClientRect();
if(r.width>=300&&r.height>=120&&s.querySelectorAll('path').length>=3&&s.querySelectorAll('text').length>=3)ok++;});
var font=false;document.fonts.forEach(function(f){if(f.family.indexOf('Liberation Sans')>=0&&f.status==='loaded')font=true;});
var clipped=[],texts=0;figs.forEach(function(f){var s=f.querySelector('svg');if(!s)return;var b=s.getBoundingClientRect();
s.querySelectorAll('text').forEach(function(t){if(!t.textContent.trim())return;texts++;var r=t.getBoundingClientRect();
if(r.width<=0||r.left<b.left-3||r.right>b.right+3||r.top<b.top-3||r.bottom>b.bottom+3)clipped.push(t.textContent);});});
var vr=-1,vw=document.documentElement.clientWidth;document.querySelectorAll('th').forEach(function(h){if(vr<0&&h.textContent.trim()==='verdict')vr=h.getBoundingClientRect().right;});
var p=document.createElement('pre');p.id='wattsched-check';
p.textContent=JSON.stringify({figures:figs.length,rendered:ok,font:font,errors:window.__errs,texts:texts,clipped:clipped,verdictRight:vr,viewWidth:vw});document.body.appendChild(p);});});</script>`

var checkPre = regexp.MustCompile(`<pre id="wattsched-check">([^<]*)</pre>`)

// chromium finds Debian's chromium (make test installs it: make chromium).
func chromium(t *testing.T) string {
	t.Helper()
	for _, n := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Skip("chromium not found: `make chromium` (run by `make test`) installs Debian's package; without it the reports are not checked in a browser")
	return ""
}

// browserResult is what the page's check found and the console lines
// (script errors, console messages) chromium logged.
type browserResult struct {
	Figures, Rendered int
	Font              bool
	Errors            []string
	Console           []string
	// Texts counts the figures' texts; Clipped are those not drawn wholly
	// inside their SVG.
	Texts   int
	Clipped []string
	// VerdictRight is where the first "verdict" column heading ends (-1:
	// none), ViewWidth the viewport's width (CSS px).
	VerdictRight, ViewWidth float64
}

// windowWidth is the browser window's width: the 1,400 px.
const windowWidth = 1400

// loadInBrowser writes page with the check script at probe, loads it in
// headless chromium (its own profile in profile), saves a screenshot at
// shot and returns what the check found.
func loadInBrowser(t *testing.T, browser, profile string, page []byte, probe, shot string) browserResult {
	t.Helper()
	if err := os.WriteFile(probe, bytes.Replace(page, []byte("<head>"), []byte("<head>"+browserCheck), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+profile, fmt.Sprintf("--window-size=%d,4000", windowWidth),
		"--virtual-time-budget=5000", "--enable-logging=stderr", "--v=0",
		"--screenshot="+shot, "--dump-dom", "file://"+probe)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	var got browserResult
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "CONSOLE") || strings.Contains(l, "Uncaught") {
			got.Console = append(got.Console, l)
		}
	}
	m := checkPre.FindSubmatch(stdout.Bytes())
	if m == nil {
		t.Fatalf("the page's check did not run (no #wattsched-check in the DOM); chromium said:\n%s", stderr.String())
	}
	if err := json.Unmarshal(m[1], &got); err != nil {
		t.Fatalf("check %s: %v", m[1], err)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() == 0 {
		t.Errorf("no screenshot at %s: %v", shot, err)
	}
	return got
}

// The check catches what it is for: of two figures, an empty SVG is not
// counted as drawn, and a script error is reported.
func TestBrowserCheckCatchesBrokenPage(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()
	svg, err := report.LinePlot{Title: "ok", XLabel: "x (s)", YLabel: "y (W)", Series: []report.Series{{Name: "a", X: []float64{0, 1}, Y: []float64{0, 1}}}}.SVG()
	if err != nil {
		t.Fatal(err)
	}
	page, err := report.Page{Title: "broken", Figures: []report.Figure{{Caption: "drawn", SVG: svg}, {Caption: "empty", SVG: []byte(`<svg width="400" height="300"></svg>`)}}}.HTML()
	if err != nil {
		t.Fatal(err)
	}
	page = bytes.Replace(page, []byte("</body>"), []byte("<script>notAFunction()</script></body>"), 1)
	// A legend label written past the SVG's right edge, and a table whose
	// verdict column starts 2,000 px to the right.
	page = bytes.Replace(page, []byte("</svg>"), []byte(`<text x="570" y="20" style="font-size:11px">cut legend label</text></svg>`), 1)
	page = bytes.Replace(page, []byte("</body>"), []byte(`<table><tr><th style="min-width:2000px">wide</th><th>verdict</th></tr></table></body>`), 1)
	got := loadInBrowser(t, browser, filepath.Join(dir, "profile"), page, filepath.Join(dir, "broken.html"), filepath.Join(dir, "broken.png"))
	if got.Figures != 2 || got.Rendered != 1 {
		t.Errorf("figures %d, drawn %d; want 2 and 1 (the empty SVG is not drawn)", got.Figures, got.Rendered)
	}
	if len(got.Clipped) != 1 || got.Clipped[0] != "cut legend label" {
		t.Errorf("clipped texts %q, want the one written past the edge", got.Clipped)
	}
	if got.VerdictRight <= got.ViewWidth {
		t.Errorf("verdict heading ends at %v px, viewport %v px: want it found off-screen", got.VerdictRight, got.ViewWidth)
	}
	if len(got.Errors) != 1 || !strings.Contains(got.Errors[0], "notAFunction") {
		t.Errorf("script errors %q, want the one of notAFunction", got.Errors)
	}
	if len(got.Console) == 0 {
		t.Error("chromium logged no console line for the script error")
	}
	if !got.Font {
		t.Error("the embedded Liberation Sans did not load")
	}
}

// TestReportsRenderInBrowser generates each kind of report (an inflation
// run like the demo's, a replay run, a compare, a reproduction) and loads
// each report.html in headless chromium: the page must raise no script
// error, show every <figure> as a drawn SVG of a sensible size, and load
// the embedded Liberation Sans that the plots are laid out with. A
// screenshot of each is kept under $WATTSCHED_SCREENSHOTS (or the test's
// temporary directory), named in the log.
func TestReportsRenderInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("whole runs")
	}
	browser := chromium(t)
	dir := t.TempDir()
	shots := os.Getenv("WATTSCHED_SCREENSHOTS")
	if shots == "" {
		shots = filepath.Join(dir, "screenshots")
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	scen := filepath.Join(dir, "inflation.yaml")
	if err := os.WriteFile(scen, []byte(`name: browser-inflation
trace: {pods: default}
seeds: 2
target: 0.6
policies:
  - {name: FGD, scorers: [{policy: fgd, weight: 1000}]}
  - {name: PWR, scorers: [{policy: pwr, weight: 1000}]}
  - {name: "0.1*PWR+0.9*FGD", scorers: [{policy: pwr, weight: 100}, {policy: fgd, weight: 900}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// byo-replay under two more settings: 12 systems named "policy /
	// setting", the widest compare table and the longest legend labels.
	byo, err := os.ReadFile("../../examples/byo-replay.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data, err := filepath.Abs("../../examples/data")
	if err != nil {
		t.Fatal(err)
	}
	variants := bytes.ReplaceAll(byo, []byte(" data/"), []byte(" "+data+"/"))
	variants = bytes.Replace(variants, []byte("\npolicies:"), []byte("\nvariants:\n  - name: always on\n    no_power_down: true\n  - name: power-down 5 min\n    power_down: {idle_after_s: 300, wake_s: 120, off_w: 10}\npolicies:"), 1)
	scenV := filepath.Join(dir, "variants.yaml")
	if err := os.WriteFile(scenV, variants, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		// figures is the least number of figures the report must show.
		figures int
		// verdict: the page has a verdict column, which must end inside
		// the viewport.
		verdict bool
	}{
		{"inflation", []string{"run", "-c", scen}, 6, false},
		{"replay", []string{"run", "-c", "../../examples/byo-replay.yaml"}, 2, false},
		{"compare", []string{"compare", "-c", "../../examples/byo-replay.yaml", "--seeds", "2"}, 4, true},
		{"compare-variants", []string{"compare", "-c", scenV, "--seeds", "2"}, 4, true},
		{"reproduce-eaco", []string{"reproduce", "eaco", "--quick"}, 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.name)
			if code, _, stderr := run(t, append(c.args, "-o", out)...); code != 0 {
				t.Fatalf("%v exited %d: %s", c.args, code, stderr)
			}
			page, err := os.ReadFile(filepath.Join(out, "report.html"))
			if err != nil {
				t.Fatal(err)
			}
			want := bytes.Count(page, []byte("<figure>"))
			if want < c.figures {
				t.Fatalf("report.html has %d figures, want at least %d", want, c.figures)
			}
			shot := filepath.Join(shots, c.name+".png")
			got := loadInBrowser(t, browser, filepath.Join(dir, "profile-"+c.name), page, filepath.Join(out, "browser-check.html"), shot)
			for _, l := range got.Console {
				t.Errorf("browser console: %s", l)
			}
			if got.Figures != want || got.Rendered != want {
				t.Errorf("the browser shows %d figures, %d of them drawn; the HTML has %d", got.Figures, got.Rendered, want)
			}
			if !got.Font {
				t.Error("the embedded Liberation Sans did not load")
			}
			if len(got.Errors) > 0 {
				t.Errorf("script errors: %q", got.Errors)
			}
			if got.Texts == 0 || len(got.Clipped) > 0 {
				t.Errorf("of the figures' %d texts, %d are cut at their SVG's edge: %q", got.Texts, len(got.Clipped), got.Clipped)
			}
			if c.verdict && !(got.VerdictRight > 0 && got.VerdictRight <= got.ViewWidth) {
				t.Errorf("the verdict column ends at %v px, outside the %v px viewport (window %d px)", got.VerdictRight, got.ViewWidth, windowWidth)
			}
			// Every system of a comparison has a labelled line in each
			// distribution plot (systems with the same line share one label).
			for _, f := range []string{"wait_cdf.svg", "jct_cdf.svg"} {
				if !c.verdict {
					break
				}
				svg, err := os.ReadFile(filepath.Join(out, f))
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range []string{"FGD", "PWR", "0.1*PWR+0.9*FGD", "BestFit"} {
					if n := bytes.Count(svg, []byte(p)); n == 0 {
						t.Errorf("%s: no legend label names %s", f, p)
					}
				}
			}
			t.Logf("screenshot: %s", shot)
		})
	}
}

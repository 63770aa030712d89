// Command go-template-render renders Go text/template templates the way Fuzzball's application
// catalog is rendered (text/template with the slim-sprig functions), deterministically: the
// reference that crates/fuzzfile_template is compared with (its tests/differential_go.rs).
//
// Build (Debian packages golang-go and golang-github-masterminds-sprig-dev, offline):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o go-template-render .
//
// One template:
//
//	go-template-render -template T.yaml [-data DATA.json] [-name NAME] [-seed N] [-now UNIX]
//
// Many (one Go process for hundreds of cases): -batch reads JSON lines from stdin, each
//
//	{"id": "...", "name": "...", "template": "...", "data": {...}, "seed": N, "now": UNIX}
//
// (all but "template" optional) and writes one JSON line per case, in order:
//
//	{"id": "...", "ok": true, "output": "..."}
//	{"id": "...", "ok": false, "phase": "data"|"parse"|"exec", "error": "...", "cause": "...", "fail": "..."}
//
// "error" is Go's whole message; "cause" what follows Go's "template: NAME:LINE:COL: executing
// "NAME" at <...>: " prefix ("error calling eq: incompatible types for comparison"); "fail" is set
// when a {{ fail "message" }} was reached, to its message. "utf8": false flags an output that
// is not valid UTF-8 (JSON then carries U+FFFD in its place).
//
// Data typing (what the Rust side's Value is): a JSON object is a map[string]interface{}, an
// array a []interface{}, a string a string, true/false a bool, null nil; a number without a
// fraction or exponent is a uint64 when it is 0 or more (a values file's uint_value) and an
// int when negative; any other number a float64. An object with the one key "$int", "$uint",
// "$float" or "$time" (seconds since the epoch) forces that type: {"$int": 3} is int(3),
// {"$time": 0} a time.Time (UTC).
//
// Functions: sprig.TxtFuncMap() (Masterminds/sprig v3, Debian's), made into slim-sprig
// (github.com/go-task/slim-sprig v3, what Fuzzball renders with):
//   - the names slim-sprig does not have are removed (sprigOnly below), so a template calling
//     one fails to parse ("function \"uuidv4\" not defined") as it does in Fuzzball;
//   - the functions whose number conversion differs are slim-sprig's own (slim_numeric.go:
//     sprig converts with spf13/cast, slim-sprig with its own reflection code);
//   - randInt draws from splitmix64 (seed from -seed or the case's "seed", 0 by default) and
//     now returns the fixed time (-now or "now", 946684800 = 2000-01-01T00:00:00Z by default),
//     the algorithms of crates/fuzzfile_template/src/funcs.rs (Random) and lib.rs
//     (RenderOptions). Each case starts from its seed.
//
// -sprig keeps sprig's own map (its extra functions and its cast conversions), only the
// random source and the clock fixed, to show where the two differ.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/Masterminds/sprig"
)

// sprigOnly: the names of sprig v3.2.3's genericMap (functions.go) that slim-sprig's
// genericMap (functions.go) does not have.
var sprigOnly = []string{
	"abbrev", "abbrevboth", "add1f", "addf", "bcrypt", "buildCustomCert", "camelcase",
	"decryptAES", "deepCopy", "derivePassword", "divf", "encryptAES", "genCA", "genCAWithKey",
	"genPrivateKey", "genSelfSignedCert", "genSelfSignedCertWithKey", "genSignedCert",
	"genSignedCertWithKey", "htpasswd", "initials", "kebabcase", "merge", "mergeOverwrite",
	"mulf", "mustDeepCopy", "mustMerge", "mustMergeOverwrite", "nospace", "randAlpha",
	"randAlphaNum", "randAscii", "randBytes", "randNumeric", "semver", "semverCompare",
	"shuffle", "snakecase", "subf", "swapcase", "untitle", "uuidv4", "wrap", "wrapWith",
}

const defaultNow = 946684800

// splitmix64 (Steele, Lea, Flood 2014), as crates/fuzzfile_template/src/funcs.rs `Random`.
type splitmix struct{ state uint64 }

func (r *splitmix) next() uint64 {
	r.state += 0x9E3779B97F4A7C15
	z := r.state
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// failError is the error of a reached {{ fail "message" }}.
type failError struct{ msg string }

func (e *failError) Error() string { return e.msg }

func funcMap(pureSprig bool, seed uint64, now int64) template.FuncMap {
	fm := sprig.TxtFuncMap()
	if !pureSprig {
		for _, name := range sprigOnly {
			delete(fm, name)
		}
		for name, f := range slimNumeric() {
			fm[name] = f
		}
	}
	rng := &splitmix{state: seed}
	// sprig: func(min, max int) int { return rand.Intn(max-min) + min }; rand.Intn panics
	// "invalid argument to Intn" when its argument is not positive (text/template turns the
	// panic into the call's error).
	fm["randInt"] = func(min, max int) int {
		n := max - min
		if n <= 0 {
			panic("invalid argument to Intn")
		}
		return min + int(rng.next()%uint64(n))
	}
	fm["now"] = func() time.Time { return time.Unix(now, 0).UTC() }
	fm["fail"] = func(msg string) (string, error) { return "", &failError{msg} }
	return fm
}

type request struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Template string          `json:"template"`
	Data     json.RawMessage `json:"data"`
	Seed     *uint64         `json:"seed"`
	Now      *int64          `json:"now"`
}

type result struct {
	ID     string  `json:"id,omitempty"`
	OK     bool    `json:"ok"`
	Output *string `json:"output,omitempty"`
	UTF8   *bool   `json:"utf8,omitempty"`
	Phase  string  `json:"phase,omitempty"`
	Error  string  `json:"error,omitempty"`
	Cause  string  `json:"cause,omitempty"`
	Fail   *string `json:"fail,omitempty"`
}

// convert types decoded JSON (numbers as json.Number) as the package comment says.
func convert(v interface{}) (interface{}, error) {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if strings.ContainsAny(s, ".eE") {
			return x.Float64()
		}
		if strings.HasPrefix(s, "-") {
			i, err := strconv.ParseInt(s, 10, 64)
			return int(i), err
		}
		return strconv.ParseUint(s, 10, 64)
	case []interface{}:
		out := make([]interface{}, len(x))
		for i, e := range x {
			c, err := convert(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case map[string]interface{}:
		if len(x) == 1 {
			for k, inner := range x {
				n, isNum := inner.(json.Number)
				if !strings.HasPrefix(k, "$") {
					break
				}
				if !isNum {
					return nil, fmt.Errorf("%s needs a number", k)
				}
				switch k {
				case "$int":
					i, err := strconv.ParseInt(string(n), 10, 64)
					return int(i), err
				case "$uint":
					return strconv.ParseUint(string(n), 10, 64)
				case "$float":
					return n.Float64()
				case "$time":
					i, err := strconv.ParseInt(string(n), 10, 64)
					return time.Unix(i, 0).UTC(), err
				default:
					return nil, fmt.Errorf("unknown type key %s", k)
				}
			}
		}
		out := make(map[string]interface{}, len(x))
		for k, e := range x {
			c, err := convert(e)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	default:
		return v, nil
	}
}

func decodeData(raw []byte) (interface{}, error) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return map[string]interface{}{}, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v interface{}
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return convert(v)
}

var execPrefix = regexp.MustCompile(`(?s)^template: .*?: executing ".*?" at <.*?>: (.*)$`)

func render(req request, pureSprig bool, seed uint64, now int64) result {
	res := result{ID: req.ID}
	if req.Seed != nil {
		seed = *req.Seed
	}
	if req.Now != nil {
		now = *req.Now
	}
	name := req.Name
	if name == "" {
		name = "template"
	}
	data, err := decodeData(req.Data)
	if err != nil {
		res.Phase, res.Error = "data", err.Error()
		return res
	}
	t, err := template.New(name).Funcs(funcMap(pureSprig, seed, now)).Parse(req.Template)
	if err != nil {
		res.Phase, res.Error = "parse", err.Error()
		return res
	}
	var out strings.Builder
	if err := t.Execute(&out, data); err != nil {
		res.Phase, res.Error = "exec", err.Error()
		var fe *failError
		if errors.As(err, &fe) {
			res.Fail = &fe.msg
		}
		if m := execPrefix.FindStringSubmatch(err.Error()); m != nil {
			res.Cause = m[1]
		}
		return res
	}
	s := out.String()
	res.OK, res.Output = true, &s
	if !utf8.ValidString(s) {
		f := false
		res.UTF8 = &f
	}
	return res
}

func main() {
	batch := flag.Bool("batch", false, "read JSON-lines cases from stdin, write one JSON line per case")
	tmplPath := flag.String("template", "", "template file (single mode)")
	dataPath := flag.String("data", "", "JSON data file (single mode; default {})")
	name := flag.String("name", "", "template name in messages (single mode; default the file name)")
	seed := flag.Uint64("seed", 0, "seed of randInt's splitmix64")
	now := flag.Int64("now", defaultNow, "what now returns, seconds since the epoch (UTC)")
	pureSprig := flag.Bool("sprig", false, "Masterminds/sprig's own function map (not slim-sprig's)")
	flag.Parse()
	// sprig's date functions format in time.Local: make it UTC, as the Rust engine's.
	time.Local = time.UTC

	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)

	if *batch {
		r := bufio.NewReaderSize(os.Stdin, 1<<20)
		line := 0
		for {
			text, err := r.ReadString('\n')
			if len(strings.TrimSpace(text)) > 0 {
				line++
				var req request
				var res result
				if jerr := json.Unmarshal([]byte(text), &req); jerr != nil {
					res = result{ID: fmt.Sprintf("line %d", line), Phase: "data", Error: jerr.Error()}
				} else {
					res = render(req, *pureSprig, *seed, *now)
				}
				if eerr := enc.Encode(res); eerr != nil {
					fmt.Fprintln(os.Stderr, eerr)
					os.Exit(2)
				}
			}
			if err == io.EOF {
				return
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
		}
	}

	if *tmplPath == "" {
		fmt.Fprintln(os.Stderr, "usage: go-template-render -template FILE [-data FILE] | -batch < cases.jsonl")
		os.Exit(2)
	}
	text, err := os.ReadFile(*tmplPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	req := request{Name: *name, Template: string(text)}
	if req.Name == "" {
		req.Name = *tmplPath
		if i := strings.LastIndex(req.Name, "/"); i >= 0 {
			req.Name = req.Name[i+1:]
		}
	}
	if *dataPath != "" {
		raw, err := os.ReadFile(*dataPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		req.Data = raw
	}
	res := render(req, *pureSprig, *seed, *now)
	if err := enc.Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if !res.OK {
		w.Flush()
		os.Exit(1)
	}
}

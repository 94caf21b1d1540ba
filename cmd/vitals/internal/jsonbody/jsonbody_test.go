package jsonbody_test

import (
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/jsonbody"
)

// springHealth is Spring Boot's /actuator/health with
// management.endpoint.health.show-details=always.
const springHealth = `{"status":"DOWN","components":{` +
	`"db":{"status":"UP","details":{"database":"PostgreSQL","validationQuery":"isValid()"}},` +
	`"diskSpace":{"status":"UP","details":{"total":499963174912,"free":91300069376,"threshold":10485760,"path":"/app/.","exists":true}},` +
	`"ping":{"status":"UP"},` +
	`"rabbit":{"status":"DOWN","details":{"error":"org.springframework.amqp.AmqpConnectException: java.net.ConnectException: Connection refused"}},` +
	`"redis":{"status":"OUT_OF_SERVICE"}},` +
	`"groups":["liveness","readiness"]}`

func TestAssertionsJudgeTheValuesTheirQueriesSelect(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		expects []jsonbody.Expect
		want    string // "" for a pass
	}{
		{"a status that is UP", `{"status":"UP"}`, []jsonbody.Expect{{"$.status", "UP"}}, ""},
		{"a status that is DOWN", springHealth, []jsonbody.Expect{{"$.status", "UP"}},
			`$.status is "DOWN": want "UP"`},
		{"the pattern matches the whole value", `{"status":"BACKUP"}`, []jsonbody.Expect{{"$.status", "UP"}},
			`$.status is "BACKUP": want "UP"`},
		{"alternatives", `{"status":"OUT_OF_SERVICE"}`, []jsonbody.Expect{{"$.status", "UP|OUT_OF_SERVICE"}}, ""},
		{"one component", springHealth, []jsonbody.Expect{{"$.components.db.status", "UP"}}, ""},
		{"every value of a wildcard, named by their paths, in order", springHealth,
			[]jsonbody.Expect{{"$.components.*.status", "UP"}},
			`$['components']['rabbit']['status'] is "DOWN": want "UP"; ` +
				`$['components']['redis']['status'] is "OUT_OF_SERVICE": want "UP"`},
		{"a query that selects nothing", `{"status":"UP"}`, []jsonbody.Expect{{"$.components.db.status", "UP"}},
			`$.components.db.status selects no value`},
		{"a filter", `{"checks":[{"name":"db","status":"pass"},{"name":"mq","status":"fail"}]}`,
			[]jsonbody.Expect{{"$.checks[?@.name=='db'].status", "pass"}}, ""},
		{"a filter that selects nothing", `{"checks":[{"name":"db","status":"pass"}]}`,
			[]jsonbody.Expect{{"$.checks[?@.status=='fail']", ".*"}}, `$.checks[?@.status=='fail'] selects no value`},
		{"a number as the body writes it", `{"replicas":3,"ratio":1.50}`,
			[]jsonbody.Expect{{"$.replicas", "3"}, {"$.ratio", `1\.50`}}, ""},
		{"a number that differs", `{"replicas":2}`, []jsonbody.Expect{{"$.replicas", "3"}}, `$.replicas is 2: want "3"`},
		{"true, false and null", `{"a":true,"b":false,"c":null}`,
			[]jsonbody.Expect{{"$.a", "true"}, {"$.b", "false"}, {"$.c", "null"}}, ""},
		{"an object is its compact JSON, and is not shown", `{"a": {"b": 1}}`,
			[]jsonbody.Expect{{"$.a", `\{"b":1\}`}, {"$.a", "x"}}, `$.a is an object: want "x"`},
		{"an array is named by its length", `{"groups":["liveness","readiness"]}`,
			[]jsonbody.Expect{{"$.groups", "x"}}, `$.groups is an array of 2: want "x"`},
		{"every assertion that fails, in their order", springHealth,
			[]jsonbody.Expect{{"$.status", "UP"}, {"$.components.ping.status", "UP"}, {"$.components.redis.status", "UP"}},
			`$.status is "DOWN": want "UP"; $.components.redis.status is "OUT_OF_SERVICE": want "UP"`},
		{"at most three values of a query", `{"a":[1,2,3,4,5]}`, []jsonbody.Expect{{"$.a[*]", "0"}},
			`$['a'][0] is 1: want "0"; $['a'][1] is 2: want "0"; $['a'][2] is 3: want "0"; and 2 more of $.a[*]`},
		{"a long string is cut", `{"error":"` + strings.Repeat("é", 40) + `"}`, []jsonbody.Expect{{"$.error", "x"}},
			`$.error is "` + strings.Repeat("é", 32) + `"…: want "x"`},
		{"a number that meets a comparison", `{"queue":{"depth":12},"lag":"3.5"}`,
			[]jsonbody.Expect{{"$.queue.depth", "< 100"}, {"$.lag", "<= 30s"}, {"$.queue.depth", ">=12"}}, ""},
		{"a number that does not", `{"queue":{"depth":312}}`, []jsonbody.Expect{{"$.queue.depth", "< 100"}},
			`$.queue.depth is 312: want < 100`},
		{"every value selected is compared", `{"queues":[{"depth":1},{"depth":500}]}`, []jsonbody.Expect{{"$.queues[*].depth", "< 100"}},
			`$['queues'][1]['depth'] is 500: want < 100`},
		{"a value that is no number", `{"depth":"many","ok":true}`, []jsonbody.Expect{{"$.depth", "< 100"}, {"$.ok", "< 100"}},
			`$.depth is "many": want a number < 100; $.ok is true: want a number < 100`},
		{"a pattern that starts as a comparison does not", `{"page":"<html>","tag":"<b>","n":"-1"}`,
			[]jsonbody.Expect{{"$.page", "<html>"}, {"$.tag", "<.*>"}, {"$.n", "<-1|-1"}}, ""},
		{"what is no comparison whole is a pattern", `{"a":"< 1oo"}`, []jsonbody.Expect{{"$.a", "< 1oo"}}, ""},
		{"the text of a comparison, as a pattern", `{"a":"< 100"}`, []jsonbody.Expect{{"$.a", "[<] 100"}}, ""},
		{"a text body", "ok", []jsonbody.Expect{{"$.status", "UP"}},
			"the body is not JSON: invalid character 'o' looking for beginning of value"},
		{"an empty body", " \n", []jsonbody.Expect{{"$.status", "UP"}}, "the body is empty, not JSON"},
		{"two values", `{"status":"UP"} {"status":"DOWN"}`, []jsonbody.Expect{{"$.status", "UP"}},
			"the body is not JSON: more follows its first value"},
		{"a cut body", `{"status":"UP","components":{`, []jsonbody.Expect{{"$.status", "UP"}},
			"the body is not JSON: unexpected EOF"},
	}
	for _, tt := range tests {
		check, err := jsonbody.New(tt.expects)
		if err != nil {
			t.Fatalf("%s: New(%v): %v", tt.name, tt.expects, err)
		}
		err = check([]byte(tt.body))
		if got := errorText(err); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestABadQueryOrPatternSaysWhatIsWrong(t *testing.T) {
	tests := []struct {
		expect jsonbody.Expect
		want   string
	}{
		{jsonbody.Expect{"status", "UP"}, `"status" is not a JSONPath query: one starts with $, the whole body, as in $.status`},
		{jsonbody.Expect{"$[", "UP"}, `"$[" is not a JSONPath query (RFC 9535): jsonpath: unexpected eof at position 3`},
		{jsonbody.Expect{"$.status", "(UP"}, "$.status: pattern \"(UP\": error parsing regexp: missing closing ): `(UP`"},
	}
	for _, tt := range tests {
		if _, err := jsonbody.New([]jsonbody.Expect{tt.expect}); errorText(err) != tt.want {
			t.Errorf("New(%v):\n got %v\nwant %s", tt.expect, err, tt.want)
		}
	}
}

func TestCutEndsTheQueryAtTheFirstEqualsSignAfterAWholeQuery(t *testing.T) {
	tests := []struct {
		flag string
		want jsonbody.Expect
		ok   bool
	}{
		{"$.status=UP", jsonbody.Expect{"$.status", "UP"}, true},
		{"$.checks[?@.name=='db'].status=pass", jsonbody.Expect{"$.checks[?@.name=='db'].status", "pass"}, true},
		{"$['a=b']=c", jsonbody.Expect{"$['a=b']", "c"}, true},
		{"$.token=a=b", jsonbody.Expect{"$.token", "a=b"}, true},
		{"$.status=", jsonbody.Expect{"$.status", ""}, true},
		{"$.status", jsonbody.Expect{}, false},
		{"status=UP", jsonbody.Expect{}, false},
	}
	for _, tt := range tests {
		if got, ok := jsonbody.Cut(tt.flag); got != tt.want || ok != tt.ok {
			t.Errorf("Cut(%q) = %v, %v; want %v, %v", tt.flag, got, ok, tt.want, tt.ok)
		}
	}
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

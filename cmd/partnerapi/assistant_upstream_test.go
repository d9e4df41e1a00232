package main

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/assistant/upstream"
)

func TestUpstreamFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		base string
		want upstream.Served
	}{
		{"qwen=http://127.0.0.1:8080", true, "http://127.0.0.1:8080", upstream.Served{}},
		{"Embeddings=http://127.0.0.1:11434/#model=nomic-embed-text&type=embedder", true, "http://127.0.0.1:11434/", upstream.Served{Remote: "nomic-embed-text", Type: "embedder"}},
		{"GigaChat=http://h:1#model=qwen2.5:7b", true, "http://h:1", upstream.Served{Remote: "qwen2.5:7b"}},
		{"qwen", false, "", upstream.Served{}},
		{"=http://x", false, "", upstream.Served{}},
		{"qwen=notaurl", false, "", upstream.Served{}},
		{"qwen=http://x#type=image", false, "", upstream.Served{}},
		{"qwen=http://x#colour=red", false, "", upstream.Served{}},
	} {
		var f upstreamFlag
		err := f.Set(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("Set(%q) = %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if !tc.ok {
			continue
		}
		for _, r := range f {
			if len(r.Bases) != 1 || r.Bases[0] != tc.base || r.Served != tc.want {
				t.Errorf("Set(%q) = %+v, want %s %+v", tc.in, r, tc.base, tc.want)
			}
		}
	}
}

// A NAME given again adds a replica, which must take the same options
// (spelt out or left to their defaults) and be another server.
func TestUpstreamFlagReplicas(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		bases []string // of "m" when all are accepted
		err   string   // in the last Set's error otherwise
	}{
		{"two replicas", []string{"m=http://gpu-1:8080", "m=http://gpu-2:8080"}, []string{"http://gpu-1:8080", "http://gpu-2:8080"}, ""},
		{"defaults spelt out", []string{"m=http://a:1#model=m&type=chat", "m=http://b:1", "m=http://c:1#type=chat"}, []string{"http://a:1", "http://b:1", "http://c:1"}, ""},
		{"same remote model", []string{"m=http://a:1#model=qwen", "m=http://b:1#model=qwen"}, []string{"http://a:1", "http://b:1"}, ""},
		{"other model id", []string{"m=http://a:1#model=qwen", "m=http://b:1#model=llama"}, nil, "every replica of m takes the same options, and an earlier one has #model=qwen"},
		{"model id on one only", []string{"m=http://a:1", "m=http://b:1#model=llama"}, nil, "an earlier one has none"},
		{"other type", []string{"m=http://a:1#type=embedder", "m=http://b:1"}, nil, "an earlier one has #type=embedder"},
		{"one server twice", []string{"m=http://a:1", "m=http://a:1"}, nil, "a:1 is already a replica of m"},
		{"replicas in one value, as the environment gives them", []string{"m=http://a:1 m=http://b:1\n\tm=http://c:1\n"}, []string{"http://a:1", "http://b:1", "http://c:1"}, ""},
		{"a conflict inside one value", []string{"m=http://a:1 m=http://b:1#type=embedder"}, nil, "an earlier one has none"},
		{"one host and path twice", []string{"m=http://u:p@a:1/v1", "m=https://a:1/v1/"}, nil, "a:1/v1 is already a replica of m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f upstreamFlag
			var err error
			for _, v := range tc.flags {
				if err = f.Set(v); err != nil {
					break
				}
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "u:p@") {
					t.Fatalf("the error names the credentials: %v", err)
				}
				return
			}
			if err != nil || !slices.Equal(f["m"].Bases, tc.bases) {
				t.Fatalf("err %v, bases %v, want %v", err, f["m"].Bases, tc.bases)
			}
		})
	}
	// The conflict ends serve before it starts, naming the flag.
	err := run(context.Background(), []string{"serve", "--only", "assistant",
		"--assistant-upstream", "m=http://a:1#model=qwen", "--assistant-upstream", "m=http://b:1#model=llama"},
		noEnv, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "assistant-upstream") || !strings.Contains(err.Error(), "same options") {
		t.Fatalf("serve with conflicting replicas: %v", err)
	}
	// The environment form carries several replicas in its one value:
	// serve reads both of these, and so meets their conflict.
	env := func(k string) string {
		if k == "PARTNERAPI_ASSISTANT_UPSTREAM" {
			return "m=http://a:1#model=qwen\nm=http://b:1#model=llama"
		}
		return ""
	}
	// Read as one replica (the second URL lost inside the first one's
	// options), serve would start and run: the deadline ends it, with no
	// error, and the test fails instead of hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = run(ctx, []string{"serve", "--only", "assistant", "--data-dir", t.TempDir(), "--models-dir", t.TempDir(),
		"--assistant-addr", "127.0.0.1:0", "--assistant-grpc-addr", "off", "--metrics-addr", "off"}, env,
		stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "PARTNERAPI_ASSISTANT_UPSTREAM") || !strings.Contains(err.Error(), "same options") {
		t.Fatalf("serve with conflicting replicas in the environment: %v", err)
	}
}

// No error of the flag quotes a credential of the URL it refuses (user
// name, password, an API key in the query): given in the environment to
// keep them out of the process list, they would otherwise reach the
// terminal or the service's log with the error.
func TestUpstreamFlagErrorsRedacted(t *testing.T) {
	const creds = "http://operator:s3cret@gpu-1:8000/v1?api_key=k3y"
	for _, tc := range []struct {
		name  string
		flags []string
		err   string // in the last Set's error
	}{
		{"unknown option", []string{"m=" + creds + "#colour=red"}, `"m=http://xxxxx@gpu-1:8000/v1?xxxxx#colour=red": unknown option`},
		{"bad type", []string{"m=" + creds + "#type=image"}, "type must be chat or embedder"},
		{"unparsable", []string{"m=" + creds + "#model=%zz"}, "want NAME=URL"},
		{"other options", []string{"m=http://a:1", "m=" + creds + "#model=llama"}, "same options"},
		{"same server", []string{"m=" + creds, "m=http://gpu-1:8000/v1"}, "already a replica"},
		{"no scheme", []string{"m=operator:s3cret@gpu-1?api_key=k3y"}, "want NAME=URL"},
		{"no name", []string{creds}, "want NAME=URL"},
		// Such a model was listed and answered "No such model" under
		// every id: the service reads a model's id up to its first ':'.
		{"name with a colon", []string{"llama3:8b=" + creds}, "NAME must hold neither ':' nor '/'"},
		{"name with a slash", []string{"Qwen/Qwen2.5=" + creds + "#model=Qwen/Qwen2.5"}, "NAME must hold neither ':' nor '/'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f upstreamFlag
			var err error
			for _, v := range tc.flags {
				if err = f.Set(v); err != nil {
					break
				}
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err %v, want one saying %q", err, tc.err)
			}
			for _, s := range []string{"operator", "s3cret", "k3y"} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("the error shows %q: %v", s, err)
				}
			}
		})
	}
	// On the command line the flag package quotes the value it refuses
	// in its own words ("invalid value ... for flag"): serve's error
	// quotes it redacted too.
	err := run(context.Background(), []string{"serve", "--only", "assistant", "--assistant-upstream", "m=" + creds + "#colour=red"},
		noEnv, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	if err == nil || !strings.Contains(err.Error(), `invalid value "m=http://xxxxx@gpu-1:8000/v1?xxxxx#colour=red" for flag -assistant-upstream: `) {
		t.Fatalf("serve with a bad --assistant-upstream: %v", err)
	}
	for _, s := range []string{"operator", "s3cret", "k3y"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("serve's error shows %q: %v", s, err)
		}
	}
	var f upstreamFlag
	if err := f.Set("m=" + creds); err != nil {
		t.Fatal(err)
	}
	if got, want := f.String(), "m=http://xxxxx@gpu-1:8000/v1?xxxxx"; got != want {
		t.Fatalf("String() = %s, want %s", got, want)
	}
}

// An --assistant-upstream named as a file of --models-dir stops serve,
// naming both, instead of hiding the local model behind the upstream.
func TestUpstreamNamedAsLocalModelIsRefused(t *testing.T) {
	err := runServeExpectError(t, "--data-dir", t.TempDir(), "--models-dir", assistantModelsDir(t), "--only", "assistant",
		"--assistant-addr", "127.0.0.1:0", "--assistant-grpc-addr", "off",
		"--assistant-upstream", "stories260K=http://127.0.0.1:9#model=qwen")
	if err == nil || !strings.Contains(err.Error(), "stories260K is also a model of --models-dir") {
		t.Errorf("serve with an upstream named stories260K beside stories260K.gguf: %v", err)
	}
}

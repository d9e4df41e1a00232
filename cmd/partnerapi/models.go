package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"partnerapi/internal/inference/local"
	"partnerapi/internal/modelstore"
)

const modelsUsage = `usage:
  partnerapi models pull SOURCE [--models-dir DIR] [--name NAME] [--sha256 HEX] [--hf-endpoint URL] [--force] [--quiet]
      SOURCE: hf.co/OWNER/REPO/FILE.gguf, hf.co/OWNER/REPO:FILE.gguf, hf.co/OWNER/REPO:Q4_K_M (a quantisation
              tag; hf.co/OWNER/REPO alone takes its only GGUF, or its Q4_K_M),
              https://huggingface.co/OWNER/REPO/resolve/REV/FILE.gguf or any http(s) URL.
      HF_TOKEN is sent to the Hub (never to the CDN it redirects to); HF_ENDPOINT names a mirror.
  partnerapi models list [--models-dir DIR]
  partnerapi models rm NAME... [--models-dir DIR]`

// runModels is `partnerapi models ...`: the models directory the assistant
// serves, managed like a package manager manages packages.
func runModels(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	if len(args) == 0 {
		return errors.New(modelsUsage)
	}
	switch args[0] {
	case "pull":
		return runModelsPull(ctx, args[1:], getenv, io)
	case "list", "ls":
		return runModelsList(args[1:], getenv, io)
	case "rm", "remove":
		return runModelsRemove(args[1:], getenv, io)
	case "-h", "--help", "help":
		fmt.Fprintln(io.out, modelsUsage)
		return nil
	}
	return fmt.Errorf("unknown models command %q\n%s", args[0], modelsUsage)
}

// parseWithArgs parses flags given before, between or after the positional
// arguments (flag.Parse alone stops at the first one) and returns those.
func parseWithArgs(fs *flag.FlagSet, args []string, getenv func(string) string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp{fs}
			}
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	// Flags set above count as given; the environment fills the rest.
	return positional, parseFlags(fs, nil, getenv)
}

func modelsDirFlag(fs *flag.FlagSet) *string {
	return fs.String("models-dir", "./models", "directory of GGUF models served by the assistant")
}

func runModelsPull(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	fs := flag.NewFlagSet("models pull", flag.ContinueOnError)
	dir := modelsDirFlag(fs)
	name := fs.String("name", "", "model name: the file becomes NAME.gguf, served as model NAME (default: the file name)")
	sum := fs.String("sha256", "", "expected sha256 (default: the one the Hub publishes, else only printed)")
	endpoint := fs.String("hf-endpoint", "", "Hugging Face endpoint or mirror (default $HF_ENDPOINT, else "+modelstore.DefaultHFEndpoint+")")
	force := fs.Bool("force", false, "replace an existing NAME.gguf")
	quiet := fs.Bool("quiet", false, "no progress output")
	pos, err := parseWithArgs(fs, args, getenv)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("models pull takes one SOURCE, got %d\n%s", len(pos), modelsUsage)
	}
	ep := cmpOr(*endpoint, getenv("HF_ENDPOINT"))
	src, err := modelstore.ParseSource(pos[0], ep)
	if err != nil {
		return err
	}
	if *name == "" && src.Name == "" && src.URL != "" {
		return fmt.Errorf("models pull: %v", src.NameErr)
	}
	label := cmpOr(*name, src.Name) + ".gguf"
	if *name == "" && src.URL == "" { // hf.co/OWNER/REPO[:TAG]: the file is picked when pulling
		label = strings.TrimSuffix(src.Repo+":"+src.Tag, ":")
	}
	progress := newPullProgress(io.err, label, isTerminal(io.err) && getenv("TERM") != "dumb")
	opts := modelstore.PullOptions{Name: *name, SHA256: *sum, Token: getenv("HF_TOKEN"), Force: *force}
	if !*quiet {
		opts.Progress = progress.update
		opts.Notify = progress.note
		fmt.Fprintf(io.err, "pulling %s from %s\n", label, cmpOr(src.URL, "hf.co/"+src.Repo))
	}
	res, err := (&modelstore.Store{Dir: *dir}).Pull(ctx, src, opts)
	progress.finish()
	if err != nil {
		return fmt.Errorf("models pull: %w", err)
	}
	switch {
	case res.AlreadyPresent:
		fmt.Fprintf(io.out, "%s is already in %s with sha256 %s\n", res.Name, *dir, res.SHA256)
		return nil
	case res.VerifiedBy != "":
		fmt.Fprintf(io.out, "sha256 %s verified (%s)\n", res.SHA256, res.VerifiedBy)
	default:
		fmt.Fprintf(io.out, "sha256 %s (not verified: the server publishes none; compare it with the model card or pass --sha256)\n", res.SHA256)
	}
	fmt.Fprintf(io.out, "installed %s (%s, %s, %s)\n", res.Path, formatBytes(res.Size), cmpOr(res.Info.Arch, "?"), cmpOr(res.Info.Quant, "?"))
	if res.Info.Tensors == 0 {
		fmt.Fprintln(io.out, "note: the file has no tensors (tokenizer only); the assistant does not serve it")
	} else {
		fmt.Fprintf(io.out, "serve it as model %q: restart `partnerapi serve --models-dir %s`\n", res.Name, *dir)
	}
	return nil
}

// runModelsList prints one line per model: NAME:VERSION, type, context
// window and functions as the assistant serves them (manifest over header),
// then what the file is: size, architecture, quantisation, sha256.
func runModelsList(args []string, getenv func(string) string, io stdio) error {
	fs := flag.NewFlagSet("models list", flag.ContinueOnError)
	dir := modelsDirFlag(fs)
	pos, err := parseWithArgs(fs, args, getenv)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return fmt.Errorf("models list takes no arguments, got %q", pos)
	}
	models, partials, err := (&modelstore.Store{Dir: *dir}).List()
	if err != nil {
		return err
	}
	for _, m := range models {
		if m.Err == nil {
			m.Err = local.CheckName(m.Name)
		}
		if m.Err != nil {
			fmt.Fprintf(io.out, "%s\tERROR\t%v\n", m.Name, m.Err)
			continue
		}
		man, err := readManifest(*dir, m.Name)
		if err != nil {
			fmt.Fprintf(io.out, "%s\tERROR\t%v\n", m.Name, err)
			continue
		}
		ctxWindow := int(m.Info.ContextLength)
		if man.ContextWindow > 0 && (ctxWindow == 0 || man.ContextWindow < ctxWindow) {
			ctxWindow = man.ContextWindow
		}
		kind := cmpOr(man.Type, local.TypeChat)
		if m.Info.Tensors == 0 {
			kind = "tokenizer-only(not served)"
		}
		fmt.Fprintf(io.out, "%s:%s\t%s\tcontext=%d\tfunctions=%v\tsize=%s\tarch=%s\tquant=%s\tsha256=%s\n",
			m.Name, cmpOr(man.Version, local.DefaultVersion), kind, ctxWindow, man.SupportsFunctions,
			formatBytes(m.Size), cmpOr(m.Info.Arch, "?"), cmpOr(m.Info.Quant, "?"), cmpOr(m.SHA256, "-"))
	}
	for _, p := range partials {
		fmt.Fprintf(io.out, "%s\tPARTIAL\t%s downloaded from %s; `models pull` resumes it, `models rm %s` discards it\n",
			p.Name, formatBytes(p.Size), cmpOr(p.URL, "?"), p.Name)
	}
	if len(models) == 0 && len(partials) == 0 {
		fmt.Fprintf(io.err, "no models in %s; get one with: partnerapi models pull hf.co/OWNER/REPO/FILE.gguf --models-dir %s\n", *dir, *dir)
	}
	return nil
}

// readManifest reads the optional NAME.json the engine applies.
func readManifest(dir, name string) (local.Manifest, error) {
	var man local.Manifest
	b, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return man, nil
	}
	if err != nil {
		return man, err
	}
	if err := json.Unmarshal(b, &man); err != nil {
		return man, fmt.Errorf("manifest %s.json: %w", name, err)
	}
	if err := man.Check(); err != nil {
		return man, fmt.Errorf("manifest %s.json: %w", name, err)
	}
	return man, nil
}

func runModelsRemove(args []string, getenv func(string) string, io stdio) error {
	fs := flag.NewFlagSet("models rm", flag.ContinueOnError)
	dir := modelsDirFlag(fs)
	pos, err := parseWithArgs(fs, args, getenv)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return errors.New("usage: partnerapi models rm NAME... [--models-dir DIR]")
	}
	store := &modelstore.Store{Dir: *dir}
	for _, name := range pos {
		name = strings.TrimSuffix(name, ".gguf")
		removed, err := store.Remove(name)
		if err != nil {
			return fmt.Errorf("models rm: %w", err)
		}
		for _, p := range removed {
			fmt.Fprintf(io.out, "removed %s\n", p)
		}
		if _, err := os.Stat(filepath.Join(*dir, name+".json")); err == nil {
			fmt.Fprintf(io.out, "kept the manifest %s (it applies again if %s is pulled back)\n", filepath.Join(*dir, name+".json"), name)
		}
	}
	fmt.Fprintln(io.out, "restart `partnerapi serve` to stop serving removed models")
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

package chattemplate

import (
	"errors"
	"io"
	"strings"

	"github.com/nikolalohinski/gonja/v2"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/loaders"
)

// rootName names a template's own source for the loader; it is not a path.
const rootName = "chat_template"

// jinjaConfig is the Jinja configuration chat templates are written for.
// Hugging Face's apply_chat_template and llama.cpp's minja both render with
// trim_blocks (the newline after a block tag is dropped) and lstrip_blocks
// (the indentation before a block tag is dropped); without them a template
// laid out over several lines, as most are, puts stray newlines and spaces
// into the prompt that the model never saw in training.
func jinjaConfig() *config.Config {
	c := config.New()
	c.TrimBlocks = true
	c.LeftStripBlocks = true
	return c
}

// gonjaDefault is gonja's default environment: its filters, tests, control
// structures and methods.
var gonjaDefault = gonja.DefaultEnvironment

// environment is the one chat templates render in: gonja's, with the
// Python behaviours of pycompat.go.
var environment = pyEnvironment()

// errNoIncludes refuses every template but the root: a model file's
// template must not read other files from the server's disk through
// include, import or extends.
var errNoIncludes = errors.New("chat templates cannot include other templates")

// sourceLoader serves a template's own source and nothing else.
type sourceLoader string

func (l sourceLoader) Read(name string) (io.Reader, error) {
	if name != rootName {
		return nil, errNoIncludes
	}
	return strings.NewReader(string(l)), nil
}

func (l sourceLoader) Resolve(name string) (string, error) {
	if name != rootName {
		return "", errNoIncludes
	}
	return name, nil
}

func (l sourceLoader) Inherit(string) (loaders.Loader, error) { return l, nil }

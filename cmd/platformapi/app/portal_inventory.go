package app

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"platformapi/resources"
)

// portalInventory groups the hardware-inventory actions: importing the AI
// node roster.
func portalInventory(opts *Options, out io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "inventory", Short: "The hardware inventory (the AI node roster)"}
	var as string
	imp := &cobra.Command{Use: "import FILE", Short: "Replace the AI node roster with FILE (YAML or JSON; - reads stdin)",
		Long: "FILE is {nodes: [...]} as docs/inventory.schema.json describes. Listed nodes are created or updated; " +
			"nodes missing from FILE are removed unless they hold node caches (then kept and reported). One " +
			"transaction, one audit event. Prints what changed as JSON.",
		Args: cobra.ExactArgs(1),
		RunE: withMain(opts, func(c *cobra.Command, m *Main, args []string) error {
			f, err := readInventory(args[0], c.InOrStdin())
			if err != nil {
				return err
			}
			res, err := m.store.ImportInventory(c.Context(), resources.Actor{Label: as}, f)
			if err != nil {
				return err
			}
			return PrintJSON(out, res)
		})}
	imp.Flags().StringVar(&as, "as", "", "acting person holding ai-write-global (empty: the host operator, audited as ops:cli)")
	cmd.AddCommand(imp)
	return cmd
}

// portalNodeKey enrols a node's agent: it prints the node's key, once.
func portalNodeKey(opts *Options, out io.Writer) *cobra.Command {
	var as string
	cmd := &cobra.Command{Use: "node-key HOSTNAME", Short: "Print a new node key for a node's agent (rotates the old one)",
		Long: "Draws a new node key for the roster node HOSTNAME and prints {hostname, node_key, rotated, " +
			"created_at} once: put node_key into the agent's --key-file (the agent re-reads it within a second). " +
			"An earlier key of the node stops working at once. The server keeps only a nonce the key derives from " +
			"under the token pepper. Audited as ai_node.node_key. On a demo installation (serve --demo, same " +
			"--data-dir) the new key is also written into the node's demo agent's key file, named as " +
			"demo_agent_key_file.",
		Args: cobra.ExactArgs(1),
		RunE: withMain(opts, func(c *cobra.Command, m *Main, args []string) error {
			k, err := m.Portal().MintNodeKey(c.Context(), resources.Actor{Label: as}, args[0])
			if err != nil {
				return err
			}
			res := struct {
				resources.NodeKeyMint
				DemoAgentKeyFile string `json:"demo_agent_key_file,omitempty"`
			}{NodeKeyMint: k}
			file, ferr := m.handDemoAgentKey(k)
			if ferr == nil {
				res.DemoAgentKeyFile = file
			}
			if err := PrintJSON(out, res); err != nil { // the key is shown this once: print it first
				return err
			}
			return ferr
		})}
	cmd.Flags().StringVar(&as, "as", "", "e-mail of the acting person holding ai-write-global or admin (required)")
	_ = cmd.MarkFlagRequired("as")
	return cmd
}

// handDemoAgentKey writes a new node key into the key file of the node's
// demo agent, as an operator would into a real agent's, when this data
// directory holds one; it returns the file ("" when there is none).
func (m *Main) handDemoAgentKey(k resources.NodeKeyMint) (string, error) {
	if m.opts.DataDir == "" {
		return "", nil
	}
	file := demoKeyFile(demoFleetDir(m.opts.DataDir), k.Hostname)
	if _, err := os.Stat(file); err != nil {
		return "", nil // no demo agent of that node here
	}
	return file, writeDemoKey(file, k.Key)
}

// readInventory reads and validates an inventory file ("-": stdin).
func readInventory(path string, stdin io.Reader) (resources.InventoryFile, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return resources.InventoryFile{}, resources.Invalid("file", resources.CodeInventoryInvalid,
			"inventory: cannot read %s: %v", path, withoutPath(err))
	}
	return resources.ParseInventory(path, data)
}

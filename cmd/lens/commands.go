package main

// root is the command tree. Help texts are the short form; each command's
// manual is its section of docs/cli.md (TestManualCoversCommands).
var root = &command{
	name:  "lens",
	usage: "[--help] [--version] COMMAND [ARG...]",
	help: `lens inspects and hands on NeMo Lens resource attributes (the carrier
OTEL_RESOURCE_ATTRIBUTES, the detectors, the job and run UUIDs, the
resource) and runs commands with them. Exit status: 0 success, 1 failure,
2 usage error; lens exec exits with the command's status.`,
	subs: []*command{
		detectCommand,
		resourceCommand,
		carrierCommand,
		uuidCommand,
		envCommand,
		execCommand,
		emitSpansCommand,
		taskPrologCommand,
		reckonCommand,
	},
}

var carrierCommand = &command{
	name:    "carrier",
	summary: "parse, format, extend and check carrier text",
	usage:   "parse|format|extend|check [FLAG...]",
	help: `Work on OTEL_RESOURCE_ATTRIBUTES text ("the carrier"), exactly as the
Python reference's functions do. Carrier text is read from stdin; one
trailing newline is not part of it.`,
	subs: []*command{
		carrierParseCommand,
		carrierFormatCommand,
		carrierExtendCommand,
		carrierCheckCommand,
	},
}

var uuidCommand = &command{
	name:    "uuid",
	summary: "derive nv.dl.job.uuid or nv.dl.run.uuid",
	usage:   "job|run [FLAG...]",
	help: `Derive the job or run UUID of this process from its environment: a
UUIDv5 in the URL namespace of a name string built from the SLURM_* and
TORCHELASTIC_* variables (docs/detection.md#uuids). The carrier never
influences either UUID.`,
	subs: []*command{uuidJobCommand, uuidRunCommand},
}

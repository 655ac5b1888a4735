// Package environ is how lens-go reads and writes environment variables: a
// small interface ([Lookuper], [Env]) that every other package takes, the
// live process environment ([OS]) and an in-memory one ([Map]).
//
// Injecting the environment instead of calling os.Getenv lets tests run in
// parallel without t.Setenv, and lets a program describe a child process
// from the environment it is about to give that child. Every lens-go
// function that takes a Lookuper or an Env treats nil as [OS], read at call
// time and never snapshotted at package initialisation: fork/exec behaviour
// depends on it.
//
// Absent and present-but-empty are different here, as with os.LookupEnv:
// several lens-go rules depend on the difference (a present but empty
// SLURM_ARRAY_TASK_ID switches on Slurm array mode; a present but empty
// DEPLOYMENT_ENV hides ENVIRONMENT).
//
// The package reads no variable of its own and emits no attributes.
package environ

-- Lmod module file for lens (docs/install.md#modulefiles).
-- Copy to a $MODULEPATH directory as lens/VERSION.lua (VERSION: the release's, as
-- "lens --version" prints it); its version is its file name. Set root to the shared
-- path of docs/install.md#shared-path. It puts the binary of the node's architecture on PATH.
local version = myModuleVersion()
local root    = pathJoin("/shared/tools/lens", version)

local machine = (capture("uname -m"):gsub("%s+", ""))
local arch    = ({ x86_64 = "amd64", aarch64 = "arm64" })[machine]
if not arch then
    LmodError("lens " .. version .. ": no binary for this node's architecture '" .. machine ..
        "' (there are linux_amd64 and linux_arm64)")
end

whatis("Name: lens")
whatis("Version: " .. version)
whatis("Description: NeMo Lens resource attributes for every process of a deep-learning job (lens-go)")
help([[
lens ]] .. version .. [[: the lens command of lens-go, a static binary.
  lens --version              what this build is (version, commit, Go version, platform)
  lens detect --explain       the attributes this process would report, and their sources
  srun lens exec -- CMD ...   run CMD with the job's resource attributes and a span
]])

conflict("lens")
prepend_path("PATH", pathJoin(root, "linux_" .. arch))
setenv("LENS_VERSION", version)

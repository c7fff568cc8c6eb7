<#
.SYNOPSIS
    Builds shogun.exe when needed, then runs `shogun start` for a workspace.

.DESCRIPTION
    start.ps1 is the PowerShell way to run shogun from a clone of its
    repository, on Windows 10 1809+/11 (Windows PowerShell 5.1 or PowerShell 7)
    and with PowerShell 7 on Linux and macOS.

    It first makes sure bin\shogun.exe (bin/shogun elsewhere) in the repository
    is current: it runs `go build -o bin/shogun.exe ./cmd/shogun` when the
    binary is missing, older than any *.go file, go.mod, go.sum or embedded
    default (config\defaults\, roles\), or when -Rebuild is given. The new
    binary is built beside the old one and renamed into place, so a shogun.exe
    that is still running (an attached tab, another workspace) does not stop
    the build. Go 1.26 must be on PATH only when a build is needed.

    Then it runs
        bin\shogun.exe --log-level <LogLevel> start --workspace <Workspace> [--roles a,b] [--dry-run]
    in this window and exits with its exit code. Ctrl-C stops the supervisor,
    which stops every role it started.

    To watch or type into the roles, run scripts\terminal.ps1 from another
    window: it opens one Windows Terminal tab per enabled role running
    `shogun attach <role>`, or prints the commands to run.

.PARAMETER Workspace
    The workspace folder: the one holding config\settings.yaml and
    config\roles.yaml (create one with `bin\shogun.exe init DIR`). Default: the
    current location.

.PARAMETER Roles
    Start only these role ids, e.g. -Roles shogun,karo. Default: every role
    enabled in config\roles.yaml.

.PARAMETER DryRun
    Validate the configuration and print the roles that would start, without
    starting anything.

.PARAMETER LogLevel
    Level of the supervisor's log lines on the console: debug, info, warn or
    error. The log file runtime\logs\supervisor\shogun.log always gets every level.
    Default: info.

.PARAMETER Rebuild
    Build bin\shogun.exe even if it looks up to date.

.EXAMPLE
    PS> .\scripts\start.ps1 -Workspace C:\work\team -DryRun

    Builds bin\shogun.exe if needed, checks C:\work\team's configuration and
    prints the table of roles that would start.

.EXAMPLE
    PS> .\scripts\start.ps1 -Workspace C:\work\team

    Runs every enabled role of C:\work\team until Ctrl-C.

.EXAMPLE
    PS> .\scripts\start.ps1 -Roles shogun,karo -LogLevel debug -Rebuild

    Rebuilds the binary, then runs only the shogun and karo roles of the
    workspace in the current folder, with debug lines on the console.

.NOTES
    Exit codes: 1 when the repository, the workspace or Go cannot be found or
    the build fails; otherwise the exit code of `shogun start`.
    If scripts are blocked on this machine, run
        powershell -ExecutionPolicy Bypass -File .\scripts\start.ps1 ...
    or Set-ExecutionPolicy -Scope CurrentUser RemoteSigned once.

.LINK
    https://github.com/shogun-dev/shogun
#>
[CmdletBinding()]
param(
    [string]$Workspace = (Get-Location),

    [string[]]$Roles,

    [switch]$DryRun,

    [ValidateSet('debug', 'info', 'warn', 'error')]
    [string]$LogLevel = 'info',

    [switch]$Rebuild
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

# Stop-Script prints one line on stderr and exits with code 1.
function Stop-Script {
    param([Parameter(Mandatory = $true)][string]$Message)
    [Console]::Error.WriteLine("start.ps1: $Message")
    exit 1
}

# Find-NewerSource returns the first source file of the repository written
# after $Than, or $null. Sources: *.go outside bin, dist, runtime, data, tools
# and hidden folders; go.mod; go.sum; the embedded defaults.
function Find-NewerSource {
    param([string]$Root, [datetime]$Than)
    $skip = @('bin', 'dist', 'runtime', 'data', 'tools', 'node_modules')
    $files = New-Object System.Collections.Generic.List[System.IO.FileInfo]
    foreach ($f in Get-ChildItem -LiteralPath $Root -File) {
        if ($f.Extension -eq '.go' -or $f.Name -eq 'go.mod' -or $f.Name -eq 'go.sum') {
            $files.Add($f)
        }
    }
    foreach ($d in Get-ChildItem -LiteralPath $Root -Directory) {
        if ($skip -contains $d.Name -or $d.Name.StartsWith('.')) {
            continue
        }
        foreach ($f in Get-ChildItem -LiteralPath $d.FullName -Recurse -File -Filter '*.go' -ErrorAction SilentlyContinue) {
            $files.Add($f)
        }
    }
    foreach ($sub in @('config/defaults', 'roles')) {
        $dir = Join-Path $Root $sub
        if (Test-Path -LiteralPath $dir -PathType Container) {
            foreach ($f in Get-ChildItem -LiteralPath $dir -Recurse -File) {
                $files.Add($f)
            }
        }
    }
    foreach ($f in $files) {
        if ($f.LastWriteTimeUtc -gt $Than) {
            return $f
        }
    }
    return $null
}

# The repository root is the folder above this script's.
$root = Split-Path -Parent $PSScriptRoot
if (-not (Test-Path -LiteralPath (Join-Path $root 'go.mod')) -or
    -not (Test-Path -LiteralPath (Join-Path $root 'cmd/shogun') -PathType Container)) {
    Stop-Script "cannot find the shogun sources (go.mod, cmd/shogun) in $root"
}

$onWindows = [System.Environment]::OSVersion.Platform -eq [System.PlatformID]::Win32NT
$ext = ''
if ($onWindows) {
    $ext = '.exe'
}
$binDir = Join-Path $root 'bin'
$exe = Join-Path $binDir ('shogun' + $ext)

# An absolute workspace path for shogun, whatever the current location.
if (-not (Test-Path -LiteralPath $Workspace -PathType Container)) {
    Stop-Script "workspace ${Workspace}: no such folder"
}
$ws = (Resolve-Path -LiteralPath $Workspace).ProviderPath

$reason = $null
if ($Rebuild) {
    $reason = '-Rebuild given'
}
elseif (-not (Test-Path -LiteralPath $exe -PathType Leaf)) {
    $reason = "bin/shogun$ext is missing"
}
else {
    $newer = Find-NewerSource -Root $root -Than (Get-Item -LiteralPath $exe).LastWriteTimeUtc
    if ($null -ne $newer) {
        $rel = $newer.FullName.Substring($root.Length).TrimStart('\', '/')
        $reason = "$rel is newer than bin/shogun$ext"
    }
}

if ($null -ne $reason) {
    $go = Get-Command -Name go -CommandType Application -ErrorAction SilentlyContinue | Select-Object -First 1
    if ($null -eq $go) {
        Stop-Script "bin/shogun$ext needs building ($reason) but 'go' is not on PATH; install Go 1.26 (see go.mod) and add its bin folder to PATH"
    }
    [Console]::Error.WriteLine("start.ps1: building bin/shogun$ext ($reason)")
    New-Item -ItemType Directory -Force -Path $binDir | Out-Null
    # Build beside the target, then rename: Windows lets a running program be
    # renamed but not overwritten, and a failed build keeps the old binary.
    $tmp = Join-Path $binDir ('.shogun.{0}.tmp{1}' -f $PID, $ext)
    Push-Location -LiteralPath $root
    try {
        & $go.Path build -o $tmp ./cmd/shogun
        $code = $LASTEXITCODE
    }
    finally {
        Pop-Location
    }
    if ($code -ne 0) {
        Remove-Item -LiteralPath $tmp -Force -ErrorAction SilentlyContinue
        Stop-Script "go build failed (exit code $code)"
    }
    $old = Join-Path $binDir ('.shogun.old' + $ext)
    if (Test-Path -LiteralPath $exe) {
        Remove-Item -LiteralPath $old -Force -ErrorAction SilentlyContinue
        Move-Item -LiteralPath $exe -Destination $old -Force
    }
    Move-Item -LiteralPath $tmp -Destination $exe -Force
    # Still in use when an older shogun runs; the next build removes it.
    Remove-Item -LiteralPath $old -Force -ErrorAction SilentlyContinue
}

$shogunArgs = @('--log-level', $LogLevel, 'start', '--workspace', $ws)
if ($Roles) {
    $shogunArgs += @('--roles', ($Roles -join ','))
}
if ($DryRun) {
    $shogunArgs += '--dry-run'
}
& $exe @shogunArgs
exit $LASTEXITCODE

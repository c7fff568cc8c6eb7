<#
.SYNOPSIS
    Opens one Windows Terminal tab per enabled role, each running
    `shogun attach <role>`; otherwise prints the commands to run.

.DESCRIPTION
    Run this while `shogun start` (scripts\start.ps1) runs the workspace in
    another window. For each role that `shogun start --dry-run` lists (the
    enabled roles of config\roles.yaml) it either

    - opens a tab titled with the role id in the Windows Terminal window named
      "shogun", running `shogun.exe attach --workspace <Workspace> <role>`
      (Ctrl-] detaches and closes the tab), when wt.exe is on PATH and
      terminal.windows_terminal.enabled is true in config\settings.yaml; or
    - prints that command, one line per role, on stdout, to paste into
      windows of your choice (and says why on stderr).

    The shogun binary is bin\shogun.exe of this repository (build it with
    scripts\start.ps1), else shogun.exe found on PATH.

    Limitations: the settings file is read line by line, not by a YAML parser.
    It understands the block style that `shogun init` writes:

        terminal:
          windows_terminal:
            enabled: true

    (any indentation, comments; true, yes or on in any case, quoted or not,
    mean enabled). A flow-style mapping such as `terminal: {windows_terminal: {enabled: true}}`, anchors or
    several documents in one file are not understood and count as "not
    enabled", which only means the commands are printed instead of run.
    The role list is read from the table that `shogun start --dry-run` prints:
    the first column of each line after the ROLE NAME ... header, up to the
    first empty line.

.PARAMETER Workspace
    The workspace folder (the one holding config\). Default: the current
    location.

.PARAMETER PrintOnly
    Print the commands even when Windows Terminal could open the tabs.

.EXAMPLE
    PS> .\scripts\terminal.ps1 -Workspace C:\work\team

    Opens a Windows Terminal tab per enabled role of C:\work\team, or prints
    the `shogun attach` commands.

.EXAMPLE
    PS> .\scripts\terminal.ps1 -PrintOnly

    Prints one `shogun attach` command per enabled role of the workspace in
    the current folder.

.NOTES
    Exit codes: 0 when the tabs were opened or the commands printed; 1 when
    the workspace or the shogun binary cannot be found or its configuration
    has errors.
#>
[CmdletBinding()]
param(
    [string]$Workspace = (Get-Location),

    [switch]$PrintOnly
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

# Stop-Script prints one line on stderr and exits with code 1.
function Stop-Script {
    param([Parameter(Mandatory = $true)][string]$Message)
    [Console]::Error.WriteLine("terminal.ps1: $Message")
    exit 1
}

# Test-WindowsTerminalEnabled reads terminal.windows_terminal.enabled from a
# settings file written in YAML block style. A missing file or key is false,
# the default of shogun itself.
function Test-WindowsTerminalEnabled {
    param([string]$Path)
    if (-not (Test-Path -LiteralPath $Path -PathType Leaf)) {
        return $false
    }
    # The keys enclosing the current line, with their indentation.
    $indents = New-Object System.Collections.Generic.List[int]
    $keys = New-Object System.Collections.Generic.List[string]
    foreach ($line in [System.IO.File]::ReadAllLines($Path)) {
        $text = $line -replace '(^|\s)#.*$', ''
        if ($text -notmatch '^( *)([A-Za-z0-9_-]+) *:( +(.*))?$') {
            continue
        }
        $indent = $Matches[1].Length
        $key = $Matches[2]
        $value = ''
        if ($Matches.ContainsKey(4)) {
            $value = $Matches[4].Trim()
        }
        while ($indents.Count -gt 0 -and $indents[$indents.Count - 1] -ge $indent) {
            $indents.RemoveAt($indents.Count - 1)
            $keys.RemoveAt($keys.Count - 1)
        }
        $path = ((@($keys) + $key) -join '.')
        if ($value -eq '') {
            $indents.Add($indent)
            $keys.Add($key)
            continue
        }
        if ($path -eq 'terminal.windows_terminal.enabled') {
            return (@('true', 'yes', 'on') -contains $value.Trim('"', "'"))
        }
    }
    return $false
}

# Get-EnabledRole returns the role ids of the table printed by
# `shogun start --dry-run`: the first column after the header line.
function Get-EnabledRole {
    param([string[]]$Lines)
    $roles = New-Object System.Collections.Generic.List[string]
    $inTable = $false
    foreach ($line in $Lines) {
        if (-not $inTable) {
            if ($line -match '^ROLE\s+NAME\s') {
                $inTable = $true
            }
            continue
        }
        if ($line.Trim() -eq '') {
            break
        }
        $roles.Add(($line.Trim() -split '\s+')[0])
    }
    return $roles.ToArray()
}

# Format-Argument quotes a word for a PowerShell command line when needed.
function Format-Argument {
    param([string]$Word)
    if ($Word -match '^[A-Za-z0-9_.:/\\-]+$') {
        return $Word
    }
    return "'" + ($Word -replace "'", "''") + "'"
}

$root = Split-Path -Parent $PSScriptRoot
$onWindows = [System.Environment]::OSVersion.Platform -eq [System.PlatformID]::Win32NT
$ext = ''
if ($onWindows) {
    $ext = '.exe'
}

if (-not (Test-Path -LiteralPath $Workspace -PathType Container)) {
    Stop-Script "workspace ${Workspace}: no such folder"
}
$ws = (Resolve-Path -LiteralPath $Workspace).ProviderPath

$exe = Join-Path (Join-Path $root 'bin') ('shogun' + $ext)
if (-not (Test-Path -LiteralPath $exe -PathType Leaf)) {
    $onPath = Get-Command -Name ('shogun' + $ext) -CommandType Application -ErrorAction SilentlyContinue |
        Select-Object -First 1
    if ($null -eq $onPath) {
        Stop-Script "bin/shogun$ext not found and no shogun$ext on PATH; build it with scripts/start.ps1 (e.g. -DryRun)"
    }
    $exe = $onPath.Path
}

# The enabled roles, as shogun itself sees them. Its error, if any, has
# already been printed on stderr.
$plan = @(& $exe start --workspace $ws --dry-run)
if ($LASTEXITCODE -ne 0) {
    Stop-Script "``shogun start --workspace $ws --dry-run`` failed (exit code $LASTEXITCODE); fix the configuration first"
}
$roles = @(Get-EnabledRole -Lines $plan)
if ($roles.Count -eq 0) {
    Stop-Script 'no roles found in the output of `shogun start --dry-run`'
}

$enabled = Test-WindowsTerminalEnabled -Path (Join-Path $ws 'config/settings.yaml')
$wt = Get-Command -Name wt.exe -CommandType Application -ErrorAction SilentlyContinue | Select-Object -First 1

$why = $null
if ($PrintOnly) {
    $why = '-PrintOnly given'
}
elseif (-not $enabled) {
    $why = 'terminal.windows_terminal.enabled is not true in config/settings.yaml'
}
elseif ($null -eq $wt) {
    $why = 'wt.exe (Windows Terminal) is not on PATH'
}

if ($null -ne $why) {
    [Console]::Error.WriteLine("terminal.ps1: $why; run each of these in its own terminal (Ctrl-] detaches):")
    foreach ($role in $roles) {
        $words = @($exe, 'attach', '--workspace', $ws, $role) | ForEach-Object { Format-Argument $_ }
        $line = $words -join ' '
        if ($words[0].StartsWith("'")) {
            $line = '& ' + $line
        }
        Write-Output $line
    }
    exit 0
}

# One wt.exe call: new-tab subcommands separated by a lone ";" argument. wt
# treats any other ";" as a separator too, so those are escaped as "\;".
$wtArgs = New-Object System.Collections.Generic.List[string]
$wtArgs.Add('-w')
$wtArgs.Add('shogun')
foreach ($role in $roles) {
    if ($wtArgs.Count -gt 2) {
        $wtArgs.Add(';')
    }
    foreach ($word in @('new-tab', '--title', $role, $exe, 'attach', '--workspace', $ws, $role)) {
        $wtArgs.Add($word.Replace(';', '\;'))
    }
}
$wtArgv = $wtArgs.ToArray()
& $wt.Path @wtArgv
[Console]::Error.WriteLine("terminal.ps1: opened $($roles.Count) tab(s) in the Windows Terminal window 'shogun': $($roles -join ', ')")

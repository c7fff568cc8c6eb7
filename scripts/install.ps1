<#
.SYNOPSIS
Installs shogun from a release, without Go, on Windows (PowerShell 5.1 and 7).

.DESCRIPTION
Picks the archive for this machine (shogun-windows-amd64.zip or
shogun-windows-arm64.zip), downloads it and SHA256SUMS, refuses it unless its
SHA-256 is the one listed, unpacks shogun.exe into the install folder, and adds
that folder to the user's PATH (unless -NoPath). Prints where it went.

.PARAMETER Version
A release tag such as v1.2.0. Default: the newest release.

.PARAMETER InstallDir
Folder for shogun.exe. Default: $env:SHOGUN_INSTALL_DIR, else
%LOCALAPPDATA%\Programs\shogun.

.PARAMETER BaseUrl
Where the archives and SHA256SUMS are: an http(s):// or file:// URL or a
folder, e.g. the dist\ of `make release`. Default: $env:SHOGUN_INSTALL_BASE_URL,
else the GitHub release.

.PARAMETER NoPath
Do not add the install folder to the user's PATH; say how instead.

.EXAMPLE
irm https://raw.githubusercontent.com/shogun-dev/shogun/main/scripts/install.ps1 | iex

The newest release, for this user, on PATH.

.EXAMPLE
.\scripts\install.ps1 -Version v1.2.0 -InstallDir C:\Tools -NoPath

A given release into C:\Tools, leaving PATH alone.

.EXAMPLE
.\scripts\install.ps1 -BaseUrl .\dist

What `make release` built, from the folder dist\.
#>
[CmdletBinding()]
param(
    [string]$Version = $env:SHOGUN_VERSION,
    [string]$InstallDir = $env:SHOGUN_INSTALL_DIR,
    [string]$BaseUrl = $env:SHOGUN_INSTALL_BASE_URL,
    [switch]$NoPath
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
# Invoke-WebRequest's progress bar makes downloads in Windows PowerShell 5.1
# many times slower.
$ProgressPreference = 'SilentlyContinue'
$repo = 'shogun-dev/shogun'

# Stops the install with one message. throw, not exit: under `irm | iex`
# exit would close the person's PowerShell window.
function Fail([string]$Message) {
    throw "install.ps1: $Message"
}

# The processor of the machine, not of this PowerShell: a 32-bit PowerShell on
# 64-bit Windows reports x86 in PROCESSOR_ARCHITECTURE and the truth in
# PROCESSOR_ARCHITEW6432.
$cpu = $env:PROCESSOR_ARCHITEW6432
if (-not $cpu) { $cpu = $env:PROCESSOR_ARCHITECTURE }
switch ($cpu) {
    'AMD64' { $arch = 'amd64' }
    'ARM64' { $arch = 'arm64' }
    default { Fail "no release for the $cpu processor: build from source with Go (see README)" }
}
$archive = "shogun-windows-$arch.zip"

if (-not $BaseUrl) {
    if ($Version) {
        $BaseUrl = "https://github.com/$repo/releases/download/$Version"
    } else {
        $BaseUrl = "https://github.com/$repo/releases/latest/download"
    }
}
$BaseUrl = $BaseUrl.TrimEnd('/', '\')

if (-not $InstallDir) {
    $InstallDir = Join-Path $env:LOCALAPPDATA 'Programs\shogun'
}

$tmp = Join-Path ([IO.Path]::GetTempPath()) ('shogun-install-' + [Guid]::NewGuid().ToString('N'))
New-Item -ItemType Directory -Path $tmp | Out-Null

# Copies $BaseUrl/$Name to $tmp\$Name.
function Get-ReleaseFile([string]$Name) {
    $dst = Join-Path $tmp $Name
    if ($BaseUrl -match '^https?://') {
        # Windows PowerShell 5.1 may offer only TLS 1.0 by default, which
        # GitHub refuses.
        [Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12
        try {
            Invoke-WebRequest -Uri "$BaseUrl/$Name" -OutFile $dst -UseBasicParsing
        } catch {
            Fail "download $BaseUrl/$Name failed: $($_.Exception.Message)"
        }
    } else {
        $src = $BaseUrl
        if ($src -match '^file://') { $src = ([Uri]$src).LocalPath }
        elseif ($src -match '^[a-z][a-z0-9+.-]+://') { Fail "${BaseUrl}: only http://, https:// and file:// URLs, or a folder" }
        $path = Join-Path $src $Name
        if (-not (Test-Path -LiteralPath $path -PathType Leaf)) { Fail "${path}: no such file" }
        Copy-Item -LiteralPath $path -Destination $dst
    }
    return $dst
}

try {
    Write-Host "downloading $BaseUrl/$archive"
    $zip = Get-ReleaseFile $archive
    $sums = Get-ReleaseFile 'SHA256SUMS'

    # "HEX  NAME" (or "HEX *NAME") per line, as sha256sum writes it.
    $want = $null
    foreach ($line in Get-Content -LiteralPath $sums) {
        if ($line -match '^([0-9a-fA-F]{64}) [ *](.+)$' -and $Matches[2].Trim() -eq $archive) {
            $want = $Matches[1].ToLowerInvariant()
            break
        }
    }
    if (-not $want) { Fail "SHA256SUMS at $BaseUrl lists no $archive" }
    $got = (Get-FileHash -LiteralPath $zip -Algorithm SHA256).Hash.ToLowerInvariant()
    if ($got -ne $want) {
        Fail "${archive}: SHA-256 is $got, SHA256SUMS says ${want}: not installed (a broken or tampered download)"
    }

    $unpacked = Join-Path $tmp 'x'
    Expand-Archive -LiteralPath $zip -DestinationPath $unpacked
    $exe = Join-Path $unpacked 'shogun.exe'
    if (-not (Test-Path -LiteralPath $exe -PathType Leaf)) { Fail "${archive}: holds no shogun.exe" }

    New-Item -ItemType Directory -Path $InstallDir -Force | Out-Null
    $target = Join-Path $InstallDir 'shogun.exe'
    # A running shogun.exe cannot be overwritten, but it can be renamed: move
    # it aside, and remove the old copy on the next install.
    $old = Join-Path $InstallDir 'shogun.exe.old'
    if (Test-Path -LiteralPath $old) { Remove-Item -LiteralPath $old -Force -ErrorAction SilentlyContinue }
    if (Test-Path -LiteralPath $target) { Move-Item -LiteralPath $target -Destination $old -Force }
    Copy-Item -LiteralPath $exe -Destination $target
} finally {
    Remove-Item -LiteralPath $tmp -Recurse -Force -ErrorAction SilentlyContinue
}

$installed = 'shogun'
try { $installed = (& $target --version 2>$null | Select-Object -First 1) } catch { }
Write-Host "installed $target ($installed)"

$dirs = @($env:Path -split ';' | Where-Object { $_ } | ForEach-Object { $_.TrimEnd('\') })
if ($dirs -notcontains $InstallDir.TrimEnd('\')) {
    if ($NoPath) {
        Write-Host "$InstallDir is not on PATH, so PowerShell will not find shogun: add it, e.g."
        Write-Host "  [Environment]::SetEnvironmentVariable('Path', `"$InstallDir;`" + [Environment]::GetEnvironmentVariable('Path', 'User'), 'User')   # then open a new terminal"
    } else {
        $userPath = [Environment]::GetEnvironmentVariable('Path', 'User')
        $userDirs = @($userPath -split ';' | Where-Object { $_ } | ForEach-Object { $_.TrimEnd('\') })
        if ($userDirs -notcontains $InstallDir.TrimEnd('\')) {
            $newPath = $InstallDir
            if ($userPath) { $newPath = "$InstallDir;$userPath" }
            [Environment]::SetEnvironmentVariable('Path', $newPath, 'User')
        }
        $env:Path = "$InstallDir;$env:Path"
        Write-Host "added $InstallDir to your PATH (new terminals find shogun; this one does now)"
    }
}

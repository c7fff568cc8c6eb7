<#
.SYNOPSIS
    Runs a team of simulated agents end to end on Windows, as a person does,
    and fails on the first thing that does not hold.
.DESCRIPTION
    For .github/workflows/windows.yml, under PowerShell 7 and Windows
    PowerShell 5.1 alike. It makes a demo workspace (shogun init --demo: five
    roles running `shogun agent-sim`), starts the team with scripts\start.ps1
    in a second PowerShell of the same kind, and from this one, through the
    named pipe: waits for every role to be ready (status), hands the karo a
    task (send) and waits for it and its three parts to be done (tasks), reads
    the karo's screen (screen), types into an ashigaru (type --submit),
    restarts another (restart), reaches the web console with the login token
    and without it, stops the team (stop), and checks that start.ps1 exited 0
    and that no role's process is left.
.PARAMETER Workspace
    Folder for the workspace; it must not exist yet.
.PARAMETER Shogun
    The shogun.exe to drive. Default: bin\shogun.exe of this repository, built
    first when it is missing (start.ps1 uses the same one).
#>
[CmdletBinding()]
param(
    [Parameter(Mandatory = $true)][string]$Workspace,
    [string]$Shogun
)
# Not 'Stop': Windows PowerShell 5.1 would turn the first line a native
# program writes to stderr (shogun says what it did there) into an error.
# Every step checks its own result instead.
$ErrorActionPreference = 'Continue'
$repo = Split-Path -Parent (Split-Path -Parent $PSScriptRoot)
if (-not $Shogun) { $Shogun = Join-Path $repo 'bin\shogun.exe' }

function Fail([string]$why) {
    Write-Host "team-e2e: FAILED: $why"
    if ($script:startLog -and (Test-Path $script:startLog)) {
        Write-Host '--- start.ps1 output ---'
        Get-Content $script:startLog, "$($script:startLog).err" -ErrorAction SilentlyContinue | Write-Host
    }
    $log = Join-Path $Workspace 'runtime\logs\supervisor\shogun.log'
    if (Test-Path $log) {
        Write-Host '--- the supervisor log (last 40 lines) ---'
        Get-Content $log -Tail 40 | Write-Host
    }
    if ($script:start -and -not $script:start.HasExited) { Stop-Process -Id $script:start.Id -Force }
    exit 1
}

# Runs shogun with the workspace and returns its standard output; a
# non-zero exit fails the run unless -AllowFail.
function Invoke-Shogun([string[]]$Arguments, [switch]$AllowFail) {
    $out = & $Shogun @Arguments 2>&1 | ForEach-Object { "$_" } | Out-String
    if ($LASTEXITCODE -ne 0 -and -not $AllowFail) { Fail "shogun $($Arguments -join ' ') exited $($LASTEXITCODE): $out" }
    return $out
}

# Waits up to $Seconds for the script block to return $true.
function Wait-Until([string]$What, [int]$Seconds, [scriptblock]$Condition) {
    $deadline = (Get-Date).AddSeconds($Seconds)
    while ((Get-Date) -lt $deadline) {
        if (& $Condition) { return }
        Start-Sleep -Milliseconds 300
    }
    Fail "no $What within $Seconds s"
}

function Get-Status {
    $json = & $Shogun status --json -w $Workspace 2>$null | Out-String
    if ($LASTEXITCODE -ne 0) { return $null }
    return $json | ConvertFrom-Json
}

$began = Get-Date
if (-not (Test-Path $Shogun)) {
    Push-Location $repo
    go build -o $Shogun ./cmd/shogun
    $code = $LASTEXITCODE
    Pop-Location
    if ($code -ne 0) { Fail "go build -o $Shogun ./cmd/shogun exited $code" }
}
$null = Invoke-Shogun @('init', '--demo', $Workspace)

# The team runs in a second PowerShell of the same kind as this one, the way
# a person runs start.ps1 in one window and drives the team from another.
$ps = (Get-Process -Id $PID).Path
$script:startLog = Join-Path ([IO.Path]::GetTempPath()) ("shogun-start-{0}.log" -f [guid]::NewGuid())
$startArgs = @('-NoProfile', '-ExecutionPolicy', 'Bypass', '-File', ('"{0}"' -f (Join-Path $repo 'scripts\start.ps1')), '-Workspace', ('"{0}"' -f $Workspace))
$script:start = Start-Process -FilePath $ps -ArgumentList $startArgs -PassThru -NoNewWindow `
    -RedirectStandardOutput $script:startLog -RedirectStandardError "$($script:startLog).err"
$null = $script:start.Handle # Windows PowerShell 5.1 forgets the exit code otherwise

Wait-Until 'five ready roles' 120 {
    $st = Get-Status
    $st -and @($st.roles | Where-Object { $_.state -eq 'ready' }).Count -eq 5
}
$st = Get-Status
$pids = @($st.roles | ForEach-Object { $_.pid })
Write-Host ("team-e2e: five roles ready after {0:n1} s; supervisor pid {1}" -f ((Get-Date) - $began).TotalSeconds, $st.pid)

$null = Invoke-Shogun @('send', '-w', $Workspace, '--to', 'karo', '--title', 'Write the tests', '--body', 'cover the login page')
Wait-Until 'four tasks done' 120 {
    # Parenthesised and piped on: 5.1's ConvertFrom-Json emits a JSON array
    # as one object.
    $tasks = @((& $Shogun tasks --json -w $Workspace 2>$null | Out-String | ConvertFrom-Json) | ForEach-Object { $_ })
    $tasks.Count -eq 4 -and @($tasks | Where-Object { $_.status -eq 'done' }).Count -eq 4
}
Write-Host 'team-e2e: send: the karo and its three ashigaru are done'

Wait-Until "the karo's screen to show its report" 30 { (Invoke-Shogun @('screen', '-w', $Workspace, 'karo')) -match 'Reported' }

$null = Invoke-Shogun @('type', '-w', $Workspace, '--submit', 'ashigaru1', 'hello from PowerShell')
Wait-Until "ashigaru1's answer to what was typed" 30 { (Invoke-Shogun @('screen', '-w', $Workspace, 'ashigaru1')) -match 'Understood: hello from PowerShell' }
Write-Host 'team-e2e: type: ashigaru1 answered'

$old = @($st.roles | Where-Object { $_.id -eq 'ashigaru2' })[0].pid
$null = Invoke-Shogun @('restart', '-w', $Workspace, 'ashigaru2')
Wait-Until 'ashigaru2 ready in a new process' 60 {
    $s = Get-Status
    $r = @($s.roles | Where-Object { $_.id -eq 'ashigaru2' })[0]
    $r -and $r.state -eq 'ready' -and $r.pid -ne 0 -and $r.pid -ne $old
}
$pids += @((Get-Status).roles | Where-Object { $_.id -eq 'ashigaru2' })[0].pid
Write-Host 'team-e2e: restart: ashigaru2 runs in a new process'

# The web console: refused without the login token, the team's status with it.
$token = (Get-Content (Join-Path $Workspace 'runtime\state\ui.token') -Raw).Trim()
try {
    $null = Invoke-WebRequest -UseBasicParsing -ErrorAction Stop -Uri 'http://127.0.0.1:5173/v1/status'
    Fail 'the web console answered without the login token'
} catch {
    $resp = $_.Exception.Response
    if (-not $resp -or [int]$resp.StatusCode -ne 401) { Fail "the web console without a token: $($_.Exception.Message) (want 401)" }
}
try {
    $web = Invoke-WebRequest -UseBasicParsing -ErrorAction Stop -Uri 'http://127.0.0.1:5173/v1/status' -Headers @{ Authorization = "Bearer $token" }
} catch {
    Fail "the web console with the token: $($_.Exception.Message)"
}
if (@(($web.Content | ConvertFrom-Json).roles).Count -ne 5) { Fail "the web console's status does not list five roles: $($web.Content)" }
Write-Host 'team-e2e: the web console answers with the token, and refuses without it'

$null = Invoke-Shogun @('stop', '-w', $Workspace)
if (-not $script:start.WaitForExit(60000)) { Fail 'start.ps1 still runs 60 s after stop' }
if ($script:start.ExitCode -ne 0) { Fail "start.ps1 exited $($script:start.ExitCode) after stop" }
foreach ($p in $pids) {
    if (Get-Process -Id $p -ErrorAction SilentlyContinue) { Fail "process $p of a role still runs after stop" }
}
$null = Invoke-Shogun @('status', '-w', $Workspace) -AllowFail
if ($LASTEXITCODE -ne 3) { Fail "status after stop exited $LASTEXITCODE, want 3 (no supervisor)" }
Write-Host ("team-e2e: passed in {0:n1} s" -f ((Get-Date) - $began).TotalSeconds)
exit 0

// A bummerl bot in TypeScript: connects over the Play stream and answers each turn with a
// random legal action (claiming 66 when it is correct). The bummerl.v1 contracts are loaded at
// run time from the repository's proto/ folder with @grpc/proto-loader: no generated code.
//
//   npm ci && npm run build
//   node dist/bot.js --server 127.0.0.1:50051 --token TOKEN [--matches N] [--challenges-only]
//
// The token may also come from $BUMMERL_TOKEN, the server from $BUMMERL_SERVER (host:port, or
// unix:/path/to.sock: a hosted bot's, see ../Containerfile and docs/any-language.md).
//
// --matches N, as in the Python kit: every match the bot takes counts; after the Nth it tells
// the service it takes no new ones (PlayRequest.drain), finishes every running match (those
// the service lists in its answer too) and exits. It never leaves a running match.
// --challenges-only: the ladder never pairs the bot (Hello.challenges_only).

import * as path from "node:path";
import { randomUUID } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

// The JSON forms of the messages this bot reads and writes (proto field names, enums as
// strings, 64-bit integers as strings: see the loader options below).
interface Action { kind: string; card: string; suit: string; }
interface Observation { points: number; legal_actions: Action[]; }
interface Turn { match_id: string; seq: string; seat: number; observation: Observation; }
interface Match { match_id: string; bot_names: string[]; counters: number[]; end_detail: string; }
interface PlayResponse {
  message: "welcome" | "turn" | "rejected" | "hand_ended" | "match_ended" | "notice" | "draining";
  welcome?: { bot: { name: string; bot_id: string }; running_matches: number;
    challenges_only: boolean };
  turn?: Turn;
  rejected?: { match_id: string; code: string; rule: string; message: string; field: string };
  notice?: { kind: string; code: string; message: string; field: string };
  match_ended?: { seat: number; won: boolean; match: Match };
  draining?: { running_match_ids: string[] };
}

function option(name: string, fallback: string): string {
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    if (args[i] === `--${name}` && i + 1 < args.length) return args[i + 1];
    if (args[i].startsWith(`--${name}=`)) return args[i].slice(name.length + 3);
  }
  return fallback;
}

const server = option("server", process.env.BUMMERL_SERVER ?? "127.0.0.1:50051");
const token = option("token", process.env.BUMMERL_TOKEN ?? "");
const matches = Number(option("matches", "0")); // 0: play until stopped
const challengesOnly = process.argv.includes("--challenges-only");
const protoRoot = option("proto", path.resolve(__dirname, "..", "..", "..", "proto"));
if (!token) {
  console.error("error: no bot token: pass --token TOKEN or set BUMMERL_TOKEN");
  process.exit(1);
}

const definition = protoLoader.loadSync("bummerl/v1/bot.proto", {
  includeDirs: [protoRoot],
  keepCase: true, // field names as in the .proto files (match_id, legal_actions)
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true, // `message` names the oneof field that is set
});
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const bummerl = (grpc.loadPackageDefinition(definition) as any).bummerl.v1;
const client = new bummerl.BotService(server, grpc.credentials.createInsecure());

function choose(observation: Observation): Action {
  const legal = observation.legal_actions;
  const claim = legal.find((a) => a.kind === "ACTION_KIND_CLAIM");
  if (claim && observation.points >= 66) return claim; // a correct claim wins the hand (R7.1)
  const plays = legal.filter((a) => a.kind === "ACTION_KIND_PLAY");
  const pool = plays.length > 0 ? plays : legal;
  return pool[Math.floor(Math.random() * pool.length)];
}

const metadata = new grpc.Metadata();
metadata.set("authorization", `Bearer ${token}`);
const call = client.Play(metadata);
let won = 0;
let lost = 0;
let name = "typescript-bot"; // the bot's registered name, once the service said it
const running = new Set<string>(); // match ids
const taken = new Set<string>(); // every match this run took (for --matches)
const ended = new Set<string>();
let draining = false;
let drainConfirmed = false;

function log(line: string): void {
  console.log(`[${name}] ${line}`);
}

function take(matchId: string): void {
  if (running.has(matchId) || ended.has(matchId)) return;
  running.add(matchId);
  taken.add(matchId);
  if (matches > 0 && taken.size > matches) {
    log(`match ${matchId} arrived after --matches ${matches} was reached: playing it to the end too`);
  } else if (matches > 0 && taken.size === matches) {
    drain();
  }
}

function drain(): void {
  if (draining) return;
  draining = true;
  call.write({ drain: { reason: `--matches ${matches} reached` } });
  log(`--matches ${matches} reached: taking no new matches; finishing the running ones`);
  // a service that never confirms (an older one): leave once the known matches are over
  setTimeout(() => { drainConfirmed = true; exitIfDone(); }, 10_000).unref();
}

function exitIfDone(): void {
  if (!draining || !drainConfirmed || running.size > 0) return;
  log(`won ${won}, lost ${lost}`);
  call.end();
  call.cancel();
  process.exit(0);
}

// `podman stop` (a hosted bot's end) sends SIGTERM; node has no handler of its own for it and,
// as a container's first process, would not stop until it is killed seconds later
process.on("SIGTERM", () => {
  log(`stopped (SIGTERM), won ${won}, lost ${lost}`);
  process.exit(0);
});

call.write({ hello: { client: "bummerl-typescript-example/0.2", challenges_only: challengesOnly } });
call.on("data", (response: PlayResponse) => {
  switch (response.message) {
    case "welcome": {
      const w = response.welcome!;
      name = w.bot.name;
      if (challengesOnly && !w.challenges_only) {
        console.error(`error: the service at ${server} does not know --challenges-only`);
        process.exit(1);
      }
      log(`connected to ${server} as ${w.bot.name} (${w.running_matches} running matches)`);
      if (matches > 0 && w.running_matches >= matches) drain(); // the answer lists them
      break;
    }
    case "turn": {
      const turn = response.turn!;
      take(turn.match_id);
      call.write({
        action: {
          match_id: turn.match_id, seq: turn.seq, action: choose(turn.observation),
          request_id: randomUUID(),
        },
      });
      break;
    }
    case "rejected": {
      const r = response.rejected!;
      log(`match ${r.match_id}: action refused (${r.code} ${r.rule}: ${r.message})`);
      break;
    }
    case "notice": { // not about one answer: e.g. the Hello refused, the database unavailable
      const n = response.notice!;
      console.log(`the service says: ${n.message} (${n.code})`);
      break;
    }
    case "match_ended": {
      const e = response.match_ended!;
      const id = e.match.match_id;
      if (ended.has(id)) break;
      ended.add(id);
      taken.add(id);
      running.delete(id);
      if (e.won) won++; else lost++;
      const opponent = e.match.bot_names[1 - e.seat];
      // counters as the kit and the dashboard write them: seat 0 first, "7:4" (may go below 0)
      log(`match ${id} ended: ${e.won ? "won" : "lost"} vs ${opponent}, ` +
        `counters ${e.match.counters.join(":")} ${e.match.end_detail}`);
      if (matches > 0 && taken.size >= matches) drain();
      exitIfDone();
      break;
    }
    case "draining": {
      drainConfirmed = true;
      for (const id of response.draining!.running_match_ids) take(id);
      exitIfDone();
      break;
    }
  }
});
call.on("error", (error: grpc.ServiceError) => {
  console.error(`error: the service at ${server} ended the stream: ${error.code} ${error.details}`);
  process.exit(1);
});

// The page's clients of the sapsam.v1 services, over Connect (@connectrpc/connect-web) to the page's
// own origin (vite and `vite preview` pass /sapsam.v1.* to `sapsam serve --http`), or to the URL
// given as ?api=URL (kept in localStorage as "sapsam.api") for a server elsewhere.
import { type Client, type Interceptor, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { AuditService } from "../gen/sapsam/v1/audit_service_pb";
import { PlayerService } from "../gen/sapsam/v1/player_service_pb";
import { TableService } from "../gen/sapsam/v1/table_service_pb";
import { TournamentService } from "../gen/sapsam/v1/tournament_service_pb";

const API_KEY = "sapsam.api";

/** The API's base URL: ?api=URL (remembered), else the one remembered, else the page's origin. */
export function apiBase(): string {
  const given = new URLSearchParams(location.search).get("api");
  if (given) localStorage.setItem(API_KEY, given.replace(/\/+$/, ""));
  return localStorage.getItem(API_KEY) ?? location.origin;
}

export interface Api {
  base: string;
  players: Client<typeof PlayerService>;
  tables: Client<typeof TableService>;
  tournaments: Client<typeof TournamentService>;
  audit: Client<typeof AuditService>;
}

/** Clients that send `Authorization: Bearer <token()>` (when there is one) on every call. */
export function connect(token: () => string | undefined, base = apiBase()): Api {
  const bearer: Interceptor = (next) => (request) => {
    const t = token();
    if (t) request.header.set("Authorization", `Bearer ${t}`);
    return next(request);
  };
  const transport = createConnectTransport({ baseUrl: base, useBinaryFormat: true, interceptors: [bearer] });
  return {
    base,
    players: createClient(PlayerService, transport),
    tables: createClient(TableService, transport),
    tournaments: createClient(TournamentService, transport),
    audit: createClient(AuditService, transport),
  };
}

/** A fresh request id (every mutating call carries one; a retry reuses it). */
export const requestId = (): string => crypto.randomUUID();

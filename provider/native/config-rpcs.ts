/**
 * The provider's own configuration (docs/design/contracts.md#configuration) as the engine hands it over:
 * CheckConfig and DiffConfig see the provider's inputs by short name (`apiKey`, from stack config
 * `gpucloud:apiKey`, values as text or, from an explicit provider, typed), Configure the same inputs once
 * more. Each value is parsed and checked by the settings table, with the environment as the fallback, so a
 * missing key is refused here and never at the first resource call.
 */
import { status } from "@grpc/grpc-js";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import { isUnknown } from "../framework/check";
import { configure, providerSettings } from "../framework/context";
import { PACKAGE } from "../tokens";
import { sameValue } from "../framework/diff";
import {
  ConfigurationError,
  SETTINGS,
  settingProblems,
  type ConfigLookup,
  type SettingName,
} from "../settings";
import { RpcError } from "./errors";
import { checkFailure, detailedDiff } from "./answers";
import { rememberSecret } from "./redact";
import { unwrap, wrap, type Props } from "./wire";

/** What the plugin takes from the engine: told by Handshake and again by Configure, which must agree. */
export const CAPABILITIES = {
  acceptSecrets: true,
  acceptResources: false,
  acceptOutputs: false,
  // Check names an Instance left untitled by the stack's autonaming configuration when the engine sends one.
  supportsAutonamingConfiguration: true,
} as const;

/** Inputs the engine itself adds to every provider's configuration (the plugin version, where it came from). */
const ENGINE_KEYS = new Set(["version", "pluginDownloadURL", "pluginChecksums"]);

const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];
const SECRET_SETTINGS = SETTING_NAMES.filter((name) => "secret" in SETTINGS[name]);

/** The old `variables` field names each setting `<package>:config:<name>`. */
const VARIABLE_PREFIX = `${PACKAGE}:config:`;

function isSetting(name: string): name is SettingName {
  return Object.hasOwn(SETTINGS, name);
}

/** The settings table reads text: "5000" from stack config, 5000 from an explicit provider. */
function asText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Provider inputs by short name, looked up by the fully qualified key the settings table asks for. */
function lookupOf(config: Props): ConfigLookup {
  const prefix = `${PACKAGE}:`;
  return (key) => (key.startsWith(prefix) ? asText(config[key.slice(prefix.length)]) : undefined);
}

function strayKeyFailure(name: string): provproto.CheckFailure {
  return checkFailure(
    name,
    `${name} is not a setting of the ${PACKAGE} provider (settings: ${SETTING_NAMES.join(", ")}); ` +
      `remove \`${PACKAGE}:${name}\` from the stack config or fix its name`,
  );
}

/** CheckConfig: every setting parsed and checked (unknowns of a preview pass); the inputs go back as given. */
export function checkConfig(req: provproto.CheckRequest): provproto.CheckResponse {
  const { props: news, secrets } = unwrap(req.getNews());
  const strays = Object.keys(news).filter((name) => !isSetting(name) && !ENGINE_KEYS.has(name));
  const known = Object.fromEntries(Object.entries(news).filter(([, value]) => !isUnknown(value)));
  const problems = settingProblems(lookupOf(known)).filter(({ name }) => !isUnknown(news[name]));
  const res = new provproto.CheckResponse();
  // The key goes back (the engine hands these inputs to Configure), but only ever as a secret.
  res.setInputs(wrap(news, [...secrets, ...SECRET_SETTINGS]));
  res.setFailuresList([
    ...strays.map(strayKeyFailure),
    ...problems.map(({ name, message }) => checkFailure(name, message)),
  ]);
  return res;
}

/** DiffConfig: which settings changed. None replaces the provider: a new key or URL still manages the same resources. */
export function diffConfig(req: provproto.DiffRequest): provproto.DiffResponse {
  const olds = unwrap(req.getOlds()).props;
  const news = unwrap(req.getNews()).props;
  const names = [...new Set([...Object.keys(olds), ...Object.keys(news)])].filter((n) => !ENGINE_KEYS.has(n));
  const changed = names.filter((name) => isUnknown(news[name]) || !sameValue(olds[name], news[name]));
  const res = new provproto.DiffResponse();
  res.setChanges(
    changed.length > 0
      ? provproto.DiffResponse.DiffChanges.DIFF_SOME
      : provproto.DiffResponse.DiffChanges.DIFF_NONE,
  );
  res.setDiffsList(changed);
  detailedDiff(
    res,
    Object.fromEntries(
      changed.map((name) => {
        const kind = olds[name] === undefined ? "add" : news[name] === undefined ? "delete" : "update";
        return [name, { kind, replace: false }];
      }),
    ),
  );
  return res;
}

/** The settings by fully qualified key, from the request's `args` (or, from an older engine, its `variables`). */
function configuredValues(req: provproto.ConfigureRequest): Map<string, string> {
  const args = unwrap(req.getArgs()).props;
  const values = new Map<string, string>();
  if (Object.keys(args).length > 0) {
    for (const [name, value] of Object.entries(args)) {
      const text = asText(value);
      if (isSetting(name) && text !== undefined) values.set(`${PACKAGE}:${name}`, text);
    }
    return values;
  }
  for (const [key, text] of req.getVariablesMap().entries()) {
    const name = key.startsWith(VARIABLE_PREFIX) ? key.slice(VARIABLE_PREFIX.length) : "";
    if (isSetting(name)) values.set(`${PACKAGE}:${name}`, text);
  }
  return values;
}

/** Configure: the settings every later call runs with, checked now (a missing key fails here, naming both ways to set it). */
export function configureProvider(req: provproto.ConfigureRequest): provproto.ConfigureResponse {
  const values = configuredValues(req);
  configure({ get: (key) => values.get(key) });
  let apiKey: string;
  try {
    apiKey = providerSettings().apiKey;
  } catch (err) {
    if (!(err instanceof ConfigurationError)) throw err;
    throw new RpcError(status.FAILED_PRECONDITION, err.message);
  }
  rememberSecret(apiKey);
  const res = new provproto.ConfigureResponse();
  res.setAcceptsecrets(CAPABILITIES.acceptSecrets);
  res.setSupportspreview(true);
  res.setSupportsAutonamingConfiguration(CAPABILITIES.supportsAutonamingConfiguration);
  res.setAcceptresources(CAPABILITIES.acceptResources);
  res.setAcceptoutputs(CAPABILITIES.acceptOutputs);
  return res;
}

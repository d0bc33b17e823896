import * as vscode from 'vscode';
import { modelOverride, readSettings, userValue } from '../../shell/config';
import { booleanSetting, numberSetting } from '../../shell/settingsSchema';
import type { CompletionPath } from '../core/request';

export interface CompletionSettings {
  enabled: boolean;
  /** From the user settings only: a repository cannot choose what is spent on every pause in typing. */
  model: string;
  languages: Record<string, boolean>;
  maxPrefixTokens: number;
  maxSuffixTokens: number;
  maxLines: number;
  maxFileChars: number;
  /** From the user settings only. */
  capDollars: number;
  /** The path set for the model in `modelOverrides`, if any. */
  pathOverride?: CompletionPath;
}

const DEFAULT_LANGUAGES: Record<string, boolean> = { '*': true, plaintext: false, markdown: false, scminput: false };

export function readCompletionSettings(): CompletionSettings {
  const c = vscode.workspace.getConfiguration('modelGateway');
  const gateway = readSettings();
  const model = gateway.defaultModels.completion;
  const languages = c.get<unknown>('completions.languages');
  return {
    // A workspace may turn completions off, never on against the person's own setting.
    enabled: booleanSetting('modelGateway.completions.enabled', userValue(c, 'completions.enabled')) && c.get('completions.enabled') !== false,
    model,
    languages:
      languages && typeof languages === 'object' && !Array.isArray(languages)
        ? Object.fromEntries(Object.entries(languages).filter(([, v]) => typeof v === 'boolean'))
        : DEFAULT_LANGUAGES,
    maxPrefixTokens: numberSetting('modelGateway.completions.maxPrefixTokens', c.get('completions.maxPrefixTokens')),
    maxSuffixTokens: numberSetting('modelGateway.completions.maxSuffixTokens', c.get('completions.maxSuffixTokens')),
    maxLines: numberSetting('modelGateway.completions.maxLines', c.get('completions.maxLines')),
    maxFileChars: numberSetting('modelGateway.completions.maxFileKB', c.get('completions.maxFileKB')) * 1024,
    capDollars: numberSetting('modelGateway.completions.dailyCapDollars', userValue(c, 'completions.dailyCapDollars')),
    pathOverride: model ? modelOverride(gateway.modelOverrides, model).completions : undefined,
  };
}

/** Whether a language gets completions: its own entry, else `*`. */
export function languageOn(languages: Record<string, boolean>, languageId: string): boolean {
  return languages[languageId] ?? languages['*'] ?? true;
}

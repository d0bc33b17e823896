import * as vscode from 'vscode';
import type { AgentToolbox } from '../../runtime/host/toolbox';
import type { EditorInsight } from '../../editor/host/feature';
import type { SearchService } from '../../search/host/searchService';
import type { FeatureHost } from '../../shell/featureHost';
import { ChatController } from './panel';

/** The chat view and its commands. */
export function activateChat(host: FeatureHost, search: SearchService, agent: AgentToolbox, editor: EditorInsight): ChatController {
  const chat = host.own(new ChatController(host.services, host.context, search, agent, editor));
  host.own(vscode.window.registerWebviewViewProvider('modelGateway.chat', chat));
  host.command('modelGateway.chat.new', () => chat.newConversation());
  host.command('modelGateway.chat.condense', () => chat.condense());
  host.command('modelGateway.memory.edit', () => chat.editMemory());
  host.command('modelGateway.chat.addContext', () => chat.addContext());
  host.command('modelGateway.chat.pickModel', () => chat.pickModel());
  host.command('modelGateway.chat.openInEditor', () => chat.openInEditor());
  host.command('modelGateway.chat.acceptEdit', () => chat.decideActiveProposal(true));
  host.command('modelGateway.chat.rejectEdit', () => chat.decideActiveProposal(false));
  return chat;
}

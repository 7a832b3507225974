import { z } from 'zod';
import type { InvitationsService } from '../../core/members/invitations.service.js';
import {
  addMemberInputSchema,
  createdInvitationSchema,
  createInvitationInputSchema,
  invitationListSchema,
  memberListSchema,
  memberSchema,
  updateMemberInputSchema,
} from '../../core/members/members.schema.js';
import type { MembersService } from '../../core/members/members.service.js';
import { defineRoute } from '../route.js';
import { workspaceParams } from './common.js';

const memberParams = workspaceParams.extend({ memberId: z.string().describe('Membership id (mem_…).') });
const invitationParams = workspaceParams.extend({ invitationId: z.string().describe('Invitation id (inv_…).') });

const exampleMember = {
  id: 'mem_8k2m4n6p8q0r2s4t6v8w',
  user_id: 'usr_3c5e7g9j1l3n5q7s9u1w',
  email: 'ana@example.com',
  name: 'Ana',
  role: 'editor' as const,
  brand_ids: null,
  created_at: '2026-03-02T09:00:00.000Z',
  updated_at: '2026-03-02T09:00:00.000Z',
};

const exampleInvitation = {
  id: 'inv_5b7d9f1h3k5m7p9r1t3v',
  email: 'joao@example.com',
  role: 'client' as const,
  brand_ids: ['brand_2x7c4v9b1n6m3q8w5e0r'],
  status: 'pending' as const,
  created_by: 'key_2x7c4v9b1n6m3q8w5e0r',
  created_at: '2026-03-02T09:00:00.000Z',
  expires_at: '2026-03-09T09:00:00.000Z',
  accepted_at: null,
};

export function memberRoutes(members: MembersService, invitations: InvitationsService) {
  return [
    defineRoute({
      operationId: 'listMembers',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/members',
      tag: 'Members',
      summary: 'List members',
      description: 'The people of the workspace with their role and brands, oldest first.',
      auth: 'bearer',
      params: workspaceParams,
      success: { status: 200, description: 'The members.', schema: memberListSchema },
      example: { response: { data: [exampleMember] } },
      handle: ({ principal, params }) => members.list(principal, params.wsId),
    }),
    defineRoute({
      operationId: 'addMember',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/members',
      tag: 'Members',
      summary: 'Add a person who has an account',
      description:
        'Adds a person who already has an account on this installation (by `email`) with a role and optionally brands, never above your own; making an owner needs an owner. An address without an account answers 404: invite it instead (`POST …/invitations`).',
      auth: 'bearer',
      params: workspaceParams,
      body: addMemberInputSchema,
      success: { status: 201, description: 'The new member.', schema: memberSchema },
      errors: ['not_found'],
      example: { request: { email: 'ana@example.com', role: 'editor' }, response: exampleMember },
      handle: ({ principal, params, body }) => members.add(principal, params.wsId, body),
    }),
    defineRoute({
      operationId: 'updateMember',
      method: 'patch',
      path: '/api/v1/workspaces/{wsId}/members/{memberId}',
      tag: 'Members',
      summary: "Change a member's role or brands",
      description:
        'Sets `role`, `brand_ids` or both (null brand_ids: every brand). Takes effect on the member\'s next request. Changing an owner needs an owner; demoting the last owner answers 409 `last_owner`.',
      auth: 'bearer',
      params: memberParams,
      body: updateMemberInputSchema,
      success: { status: 200, description: 'The member as changed.', schema: memberSchema },
      errors: ['not_found', 'last_owner'],
      example: { request: { role: 'viewer' }, response: { ...exampleMember, role: 'viewer' } },
      handle: ({ principal, params, body }) => members.update(principal, params.wsId, params.memberId, body),
    }),
    defineRoute({
      operationId: 'removeMember',
      method: 'delete',
      path: '/api/v1/workspaces/{wsId}/members/{memberId}',
      tag: 'Members',
      summary: 'Remove a member',
      description:
        "Removes the person from this workspace and ends their dashboard sessions in it at once (their account and other workspaces stay). Removing an owner needs an owner; the last owner answers 409 `last_owner`.",
      auth: 'bearer',
      params: memberParams,
      success: { status: 204, description: 'Removed.' },
      errors: ['not_found', 'last_owner'],
      handle: ({ principal, params }) => members.remove(principal, params.wsId, params.memberId),
    }),
    defineRoute({
      operationId: 'listInvitations',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/invitations',
      tag: 'Members',
      summary: 'List invitations',
      description: 'Every invitation of the workspace, newest first, with its status; never its token.',
      auth: 'bearer',
      params: workspaceParams,
      success: { status: 200, description: 'The invitations.', schema: invitationListSchema },
      example: { response: { data: [exampleInvitation] } },
      handle: ({ principal, params }) => invitations.list(principal, params.wsId),
    }),
    defineRoute({
      operationId: 'createInvitation',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/invitations',
      tag: 'Members',
      summary: 'Invite a person',
      description:
        'Invites an address with a role and optionally brands, never above your own. The one-time `token` and `accept_url` are returned only in this answer: pass the link on (it is also mailed when SMTP is configured). A pending invitation of the same address is replaced. The link works once, for 7 days unless `expires_in_days` says otherwise.',
      auth: 'bearer',
      params: workspaceParams,
      body: createInvitationInputSchema,
      success: { status: 201, description: 'The invitation, with its token and link (shown once).', schema: createdInvitationSchema },
      example: {
        request: { email: 'joao@example.com', role: 'client', brand_ids: ['brand_2x7c4v9b1n6m3q8w5e0r'] },
        response: { ...exampleInvitation, token: 'q3Zt8N0v1cXyB5mR7kL2pW9sD4fG6hJ8aE1uI3oT5yQ', accept_url: 'https://publisher.example.com/dashboard/join/q3Zt8N0v1cXyB5mR7kL2pW9sD4fG6hJ8aE1uI3oT5yQ', mailed: false },
      },
      handle: ({ principal, params, body }) => invitations.invite(principal, params.wsId, body),
    }),
    defineRoute({
      operationId: 'revokeInvitation',
      method: 'delete',
      path: '/api/v1/workspaces/{wsId}/invitations/{invitationId}',
      tag: 'Members',
      summary: 'Revoke an invitation',
      description: 'The link stops working at once. Revoking a revoked invitation is a no-op; an accepted one answers 404 (remove the member instead).',
      auth: 'bearer',
      params: invitationParams,
      success: { status: 204, description: 'Revoked.' },
      errors: ['not_found'],
      handle: ({ principal, params }) => invitations.revoke(principal, params.wsId, params.invitationId),
    }),
  ];
}

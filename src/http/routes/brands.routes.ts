import { brandIdSchema, brandInputSchema, brandListSchema, brandSchema, brandUpdateInputSchema } from '../../core/brands/brands.schema.js';
import type { BrandsService } from '../../core/brands/brands.service.js';
import { defineRoute } from '../route.js';
import { workspaceParams } from './common.js';

const brandParams = workspaceParams.extend({ brandId: brandIdSchema });

const exampleBrand = {
  id: 'brand_4k8xq2m7tv9c1zb3nfa0',
  name: 'Corner Bakery',
  approval_roles: null,
  created_at: '2026-02-20T10:04:31.000Z',
  updated_at: '2026-02-20T10:04:31.000Z',
};

export function brandRoutes(brands: BrandsService) {
  return [
    defineRoute({
      operationId: 'createBrand',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/brands',
      tag: 'Brands',
      summary: 'Create a brand',
      description: 'Counted on the `brands` stock meter (403 limit_reached with resolve desativar_outra when full).',
      auth: 'bearer',
      params: workspaceParams,
      body: brandInputSchema,
      success: { status: 201, description: 'The brand.', schema: brandSchema },
      example: { request: { name: 'Corner Bakery' }, response: exampleBrand },
      errors: ['limit_reached'],
      handle: ({ principal, params, body }) => brands.create(principal, params.wsId, body),
    }),
    defineRoute({
      operationId: 'listBrands',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/brands',
      tag: 'Brands',
      summary: 'List brands',
      auth: 'bearer',
      params: workspaceParams,
      success: { status: 200, description: 'The brands, oldest first.', schema: brandListSchema },
      example: { response: { data: [exampleBrand] } },
      handle: ({ principal, params }) => brands.list(principal, params.wsId),
    }),
    defineRoute({
      operationId: 'getBrand',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/brands/{brandId}',
      tag: 'Brands',
      summary: 'Get a brand',
      auth: 'bearer',
      params: brandParams,
      success: { status: 200, description: 'The brand.', schema: brandSchema },
      example: { response: exampleBrand },
      errors: ['not_found'],
      handle: ({ principal, params }) => brands.get(principal, params.wsId, params.brandId),
    }),
    defineRoute({
      operationId: 'updateBrand',
      method: 'patch',
      path: '/api/v1/workspaces/{wsId}/brands/{brandId}',
      tag: 'Brands',
      summary: 'Rename a brand or set its approval roles',
      description:
        "`approval_roles` lists the roles whose contents on this brand wait for a person's approval before they are scheduled or published (contributors always do); null returns the brand to the workspace's default (GET …/approval-policy). Setting it needs an owner or admin.",
      auth: 'bearer',
      params: brandParams,
      body: brandUpdateInputSchema,
      success: { status: 200, description: 'The brand.', schema: brandSchema },
      example: { request: { name: 'Corner Bakery & Café' }, response: { ...exampleBrand, name: 'Corner Bakery & Café', updated_at: '2026-02-21T08:12:00.000Z' } },
      errors: ['not_found', 'forbidden'],
      handle: ({ principal, params, body }) => brands.update(principal, params.wsId, params.brandId, body),
    }),
    defineRoute({
      operationId: 'deleteBrand',
      method: 'delete',
      path: '/api/v1/workspaces/{wsId}/brands/{brandId}',
      tag: 'Brands',
      summary: 'Delete a brand',
      description: 'Deactivates its connections (freeing their slots) and frees the brand slot; its contents stay readable.',
      auth: 'bearer',
      params: brandParams,
      success: { status: 204, description: 'Deleted.' },
      errors: ['not_found'],
      handle: ({ principal, params }) => brands.remove(principal, params.wsId, params.brandId),
    }),
  ];
}

package engine

import (
	"github.com/cairn-mcp/cairn/sdk/idempotency"
	"slices"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Skill is an entry of the SDD skill registry.
type Skill struct {
	SkillID     string   `json:"skillId"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	CreatedAt   string   `json:"createdAt"`
	UpdatedAt   string   `json:"updatedAt"`
}

// SkillPayload is RegisterSkill's payload; nil fields keep stored values.
type SkillPayload struct {
	Title       *string  `json:"title,omitempty"`
	Description *string  `json:"description,omitempty"`
	Tags        []string `json:"tags,omitempty"`
}

// AgentSkills is the assignment of skills to one agent.
type AgentSkills struct {
	AgentID  string   `json:"agentId"`
	SkillIDs []string `json:"skillIds"`
}

// AgentSkillsDetail adds the registry entries of the skills.
type AgentSkillsDetail struct {
	AgentID  string   `json:"agentId"`
	SkillIDs []string `json:"skillIds"`
	Skills   []Skill  `json:"skills"`
}

// SkillMatrix is ListSkillMatrix's result.
type SkillMatrix struct {
	Registry []Skill             `json:"registry"`
	Agents   []AgentSkillsDetail `json:"agents"`
}

// SkillRecommendation is RecommendSkillsForIntent's result.
type SkillRecommendation struct {
	Intent   string   `json:"intent"`
	Agents   []string `json:"agents"`
	SkillIDs []string `json:"skillIds"`
	Skills   []Skill  `json:"skills"`
}

// RegisterSkill creates or updates a registry entry.
func (e *Engine) RegisterSkill(skillID string, in SkillPayload) (*Skill, error) {
	return e.registerSkill(Call{}, skillID, in)
}

func (e *Engine) registerSkill(c Call, skillID string, in SkillPayload) (*Skill, error) {
	if err := checkName("skillId", skillID); err != nil {
		return nil, err
	}
	if in.Title != nil {
		if err := checkText("title", *in.Title, false, maxShortText); err != nil {
			return nil, err
		}
	}
	if in.Description != nil {
		if err := checkText("description", *in.Description, false, maxTextLen); err != nil {
			return nil, err
		}
	}
	if err := checkList("tags", in.Tags); err != nil {
		return nil, err
	}
	k := keyFor(c, "skill.register", map[string]any{"skillId": skillID, "payload": in})
	out, _, err := writeKeyed(e, k, func(s *state, now time.Time, _ func(string, any)) (Skill, error) {
		sk, ok := s.Skills[skillID]
		if !ok {
			sk = Skill{SkillID: skillID, Title: skillID, Tags: []string{}, CreatedAt: iso(now)}
		}
		if in.Title != nil && *in.Title != "" {
			sk.Title = *in.Title
		}
		if in.Description != nil {
			sk.Description = *in.Description
		}
		if in.Tags != nil {
			sk.Tags = append([]string{}, in.Tags...)
		}
		sk.UpdatedAt = iso(now)
		s.Skills[skillID] = sk
		return sk, nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// BindSkillToAgent assigns a registered skill to an agent (idempotent).
// An unregistered skill is 404 ERR_SKILL_NOT_FOUND.
func (e *Engine) BindSkillToAgent(agentID, skillID string) (*AgentSkills, error) {
	return e.bindSkill(Call{}, agentID, skillID)
}

func (e *Engine) bindSkill(c Call, agentID, skillID string) (*AgentSkills, error) {
	return e.editAgentSkills(keyFor(c, "skill.bind", []string{agentID, skillID}), agentID, skillID, func(s *state, ids []string) ([]string, error) {
		if _, ok := s.Skills[skillID]; !ok {
			return nil, errs.NotFoundf(errs.SkillNotFound, "skillId", "skill %q is not registered; register it with sdd_skill register first", skillID)
		}
		if !slices.Contains(ids, skillID) {
			ids = append(ids, skillID)
		}
		return ids, nil
	})
}

// UnbindSkillFromAgent removes an assignment; unbinding something not
// bound is not an error and returns the agent's current skills.
func (e *Engine) UnbindSkillFromAgent(agentID, skillID string) (*AgentSkills, error) {
	return e.unbindSkill(Call{}, agentID, skillID)
}

func (e *Engine) unbindSkill(c Call, agentID, skillID string) (*AgentSkills, error) {
	return e.editAgentSkills(keyFor(c, "skill.unbind", []string{agentID, skillID}), agentID, skillID, func(_ *state, ids []string) ([]string, error) {
		kept := []string{}
		for _, id := range ids {
			if id != skillID {
				kept = append(kept, id)
			}
		}
		return kept, nil
	})
}

// editAgentSkills validates the ids, replaces the agent's skill list with
// what edit returns (an empty list removes the agent) and persists.
func (e *Engine) editAgentSkills(k idempotency.Key, agentID, skillID string, edit func(s *state, ids []string) ([]string, error)) (*AgentSkills, error) {
	if err := checkName("agentId", agentID); err != nil {
		return nil, err
	}
	if err := checkName("skillId", skillID); err != nil {
		return nil, err
	}
	out, _, err := writeKeyed(e, k, func(s *state, _ time.Time, _ func(string, any)) (AgentSkills, error) {
		ids, err := edit(s, s.AgentSkills[agentID])
		if err != nil {
			return AgentSkills{}, err
		}
		if len(ids) == 0 {
			delete(s.AgentSkills, agentID)
		} else {
			s.AgentSkills[agentID] = ids
		}
		return AgentSkills{AgentID: agentID, SkillIDs: append([]string{}, ids...)}, nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ListSkillMatrix returns the registry and the agents' assignments; with
// agentID only that agent (with empty lists when it has none).
func (e *Engine) ListSkillMatrix(agentID string) (*SkillMatrix, error) {
	if agentID != "" {
		if err := checkName("agentId", agentID); err != nil {
			return nil, err
		}
	}
	out := &SkillMatrix{Registry: []Skill{}, Agents: []AgentSkillsDetail{}}
	err := e.read(func(s *state, _ time.Time) error {
		for _, id := range sortedKeys(s.Skills) {
			out.Registry = append(out.Registry, copySkill(s.Skills[id]))
		}
		agents := sortedKeys(s.AgentSkills)
		if agentID != "" {
			agents = []string{agentID}
		}
		for _, a := range agents {
			d := AgentSkillsDetail{AgentID: a, SkillIDs: append([]string{}, s.AgentSkills[a]...), Skills: []Skill{}}
			for _, id := range d.SkillIDs {
				if sk, ok := s.Skills[id]; ok {
					d.Skills = append(d.Skills, copySkill(sk))
				}
			}
			out.Agents = append(out.Agents, d)
		}
		return nil
	})
	return out, err
}

// RecommendSkillsForIntent flattens the plan of intent and returns its
// agents and their bound skills in plan order, without duplicates.
func (e *Engine) RecommendSkillsForIntent(intent string, opts SpawnOptions) (*SkillRecommendation, error) {
	if err := checkName("intent", intent); err != nil {
		return nil, err
	}
	out := &SkillRecommendation{Intent: intent, Agents: []string{}, SkillIDs: []string{}, Skills: []Skill{}}
	err := e.read(func(s *state, _ time.Time) error {
		plan, err := e.resolveLocked(s, intent, opts)
		if err != nil {
			return err
		}
		for _, st := range plan.Steps {
			if !slices.Contains(out.Agents, st.Agent) {
				out.Agents = append(out.Agents, st.Agent)
			}
			for _, id := range s.AgentSkills[st.Agent] {
				if slices.Contains(out.SkillIDs, id) {
					continue
				}
				out.SkillIDs = append(out.SkillIDs, id)
				if sk, ok := s.Skills[id]; ok {
					out.Skills = append(out.Skills, copySkill(sk))
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func copySkill(s Skill) Skill {
	s.Tags = append([]string{}, s.Tags...)
	return s
}

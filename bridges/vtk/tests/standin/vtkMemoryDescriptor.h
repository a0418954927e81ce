// A stand-in for VTK's vtkMemoryDescriptor (Common/Core, in VTK's unreleased work), written for
// the tests from its documented interface: the same names and hold semantics (an owner or a
// release, exclusive; TakeRelease hands a release on and refuses an owner; the destructor drops
// what is held), so that dlbridge/vtk_memory_descriptor.h is compiled and tested before a VTK
// release ships the class. Only on the tests' include path, and only where VTK lacks the class.
#ifndef vtkMemoryDescriptor_h
#define vtkMemoryDescriptor_h

#include <vtkObject.h>
#include <vtkType.h>

#include <string>

class vtkMemoryDescriptor : public vtkObject {
 public:
  using ReleaseFunction = void (*)(void* context);
  static vtkMemoryDescriptor* New() {
    auto* made = new vtkMemoryDescriptor;
    made->InitializeObjectBase();
    return made;
  }
  vtkTypeMacro(vtkMemoryDescriptor, vtkObject);

  void SetPointer(vtkTypeInt64 pointer) { this->Pointer = pointer; }
  vtkTypeInt64 GetPointer() const { return this->Pointer; }
  void SetSizeInBytes(vtkTypeInt64 size) { this->SizeInBytes = size; }
  vtkTypeInt64 GetSizeInBytes() const { return this->SizeInBytes; }
  void SetMemorySpace(const char* space) { this->Assign(this->Space, this->HasSpace, space); }
  const char* GetMemorySpace() const { return this->HasSpace ? this->Space.c_str() : nullptr; }
  void SetRole(const char* role) { this->Assign(this->RoleText, this->HasRole, role); }
  const char* GetRole() const { return this->HasRole ? this->RoleText.c_str() : nullptr; }
  void Set(vtkTypeInt64 pointer, vtkTypeInt64 size, const char* space, const char* role = "data") {
    this->SetPointer(pointer);
    this->SetSizeInBytes(size);
    this->SetMemorySpace(space);
    this->SetRole(role);
  }

  void SetOwner(vtkObject* owner) {
    if (owner != nullptr) owner->Register(this);  // before the old one goes: it may be the same
    this->Drop();
    this->Owner = owner;
  }
  vtkObject* GetOwner() const { return this->Owner; }
  void SetRelease(ReleaseFunction release, void* context) {
    if (release == this->Release && context == this->ReleaseContext) return;
    this->Drop();
    this->Release = release;
    this->ReleaseContext = context;
  }
  ReleaseFunction GetRelease() const { return this->Release; }
  void* GetReleaseContext() const { return this->ReleaseContext; }
  bool HasOwnership() const { return this->Owner != nullptr || this->Release != nullptr; }
  bool TakeRelease(ReleaseFunction& release, void*& context) {
    release = this->Release;
    context = this->ReleaseContext;
    this->Release = nullptr;
    this->ReleaseContext = nullptr;
    return release != nullptr;
  }

 protected:
  vtkMemoryDescriptor() = default;
  ~vtkMemoryDescriptor() override { this->Drop(); }

 private:
  static void Assign(std::string& text, bool& has, const char* value) {
    has = value != nullptr;
    text = has ? value : "";
  }
  void Drop() {
    vtkObject* owner = this->Owner;
    ReleaseFunction release = this->Release;
    void* context = this->ReleaseContext;
    this->Owner = nullptr;
    this->Release = nullptr;
    this->ReleaseContext = nullptr;
    if (owner != nullptr) owner->UnRegister(this);
    if (release != nullptr) release(context);
  }

  vtkTypeInt64 Pointer = 0;
  vtkTypeInt64 SizeInBytes = 0;
  std::string Space;
  bool HasSpace = false;
  std::string RoleText;
  bool HasRole = false;
  vtkObject* Owner = nullptr;
  ReleaseFunction Release = nullptr;
  void* ReleaseContext = nullptr;
};

#endif  // vtkMemoryDescriptor_h
